/*
 * src/inspect/main.c - l2tpv3-inspect: decode and lint the L2TPv3 control
 * messages of a pcap or pcapng capture with the daemon's own codec.
 *
 * Exit status: 0 no violation, 1 violations found, 2 unreadable input or
 * bad usage (a capture cut short still gets its messages and summary
 * printed first: what was read is worth showing).
 */
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

#define EXIT_CLEAN	0
#define EXIT_VIOLATION	1
#define EXIT_INPUT	2

static void usage(FILE *f)
{
	fprintf(f,
"usage: l2tpv3-inspect [-j] [--secret S] [--udp-port N] FILE.pcap|FILE.pcapng|-\n"
"  -j, --json         one JSON object per message, then a summary object\n"
"  -s, --secret S     shared secret: verify Message Digests, unhide hidden AVPs\n"
"  -p, --udp-port N   L2TP UDP port (default 1701; replies from other ports are\n"
"                     followed once a control message was seen)\n"
"  -h, --help         this text\n"
"Exit status: 0 no violation, 1 violations found, 2 unreadable input.\n");
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct insp_opts *o, const char **file)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "secret", required_argument, NULL, 's' },
		{ "udp-port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "js:p:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			o->json = true;
			break;
		case 's':
			o->have_secret = true;
			o->secret.p = (const uint8_t *)optarg;
			o->secret.len = strlen(optarg);
			break;
		case 'p':
			if (parse_port(optarg, &o->udp_port) < 0) {
				fprintf(stderr, "l2tpv3-inspect: bad UDP port '%s'\n", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_CLEAN);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -1;
	}
	*file = argv[optind];
	return 0;
}

static pcap_t *open_capture(const char *file)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p;
	int dlt;

	/* nanoseconds when the file has them; microsecond files are scaled */
	p = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, err);
	if (p == NULL) {
		/* libpcap names the file itself in some messages */
		if (strncmp(err, file, strlen(file)) == 0)
			fprintf(stderr, "l2tpv3-inspect: %s\n", err);
		else
			fprintf(stderr, "l2tpv3-inspect: %s: %s\n",
				strcmp(file, "-") ? file : "stdin", err);
		return NULL;
	}
	dlt = pcap_datalink(p);
	if (!insp_pkt_linktype_ok(dlt)) {
		fprintf(stderr, "l2tpv3-inspect: %s: unsupported link type %s (%d): need "
			"Ethernet, Linux cooked, raw IP or loopback\n", file,
			pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?", dlt);
		pcap_close(p);
		return NULL;
	}
	return p;
}

static void one_frame(int dlt, const struct pcap_pkthdr *h, const uint8_t *data,
		      unsigned frame, int64_t t, const struct insp_opts *o)
{
	struct insp_pkt pk;

	insp_pkt_parse(dlt, data, h->caplen, o, &pk);
	pk.frame = frame;
	pk.t_ns = t;
	switch (pk.kind) {
	case PKT_CONTROL:
		insp_conn_message(&pk);
		break;
	case PKT_DATA:
		insp_out_data();
		insp_conn_data(&pk);
		break;
	case PKT_UNDECODED:
		insp_rec_new(&pk);
		break;
	case PKT_OTHER:
		break;
	}
	insp_out_flush(false);
}

/* Reads every frame; -1 when the file turned out unreadable part way. */
static int run(pcap_t *p, const struct insp_opts *o, unsigned *frames, int64_t *end)
{
	int dlt = pcap_datalink(p), rc;
	struct pcap_pkthdr *h;
	const u_char *data;
	int64_t t0 = 0, t = 0;

	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		t = (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec;
		if (++*frames == 1)
			t0 = t;
		one_frame(dlt, h, data, *frames, t - t0, o);
	}
	*end = t - t0;
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "l2tpv3-inspect: after frame %u: %s\n", *frames, pcap_geterr(p));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct insp_opts o = { .udp_port = INSP_DEFAULT_PORT };
	const char *file;
	unsigned frames = 0;
	int64_t end = 0;
	pcap_t *p;
	int rc;

	if (parse_args(argc, argv, &o, &file) < 0)
		return EXIT_INPUT;
	p = open_capture(file);
	if (p == NULL)
		return EXIT_INPUT;
	insp_out_init(&o);
	insp_conn_init(&o);
	rc = run(p, &o, &frames, &end);
	pcap_close(p);
	insp_conn_finish(end);
	insp_out_summary(frames, insp_conn_count());
	insp_conn_shutdown();
	insp_pkt_shutdown();
	if (rc < 0)
		return EXIT_INPUT;
	return insp_out_violations() ? EXIT_VIOLATION : EXIT_CLEAN;
}
