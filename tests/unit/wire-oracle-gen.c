/*
 * tests/unit/wire-oracle-gen.c - writes every sample message, built with
 * our encoder, into pcap files for tshark to judge (wire-oracle.sh).
 *
 *   wire-oracle-gen DIR		writes DIR/udp.pcap, DIR/ip.pcap,
 *					DIR/auth-udp.pcap, DIR/auth-ip.pcap
 *					and DIR/expected.txt
 *   wire-oracle-gen -s DIR		one file per message (fuzz seed corpus)
 *
 * The auth-* files carry the same conversation with Control Message
 * Authentication (MD5 over UDP, SHA-1 over IP; no ZLB, which 6.15 forbids
 * then) and hidden AVPs, so tshark can check our digests with the secret.
 * expected.txt is what tshark must read back, one line per message:
 * "type ccid ns nr" in tshark's -T fields notation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "proto/auth.h"
#include "proto/msg.h"
#include "wire-oracle-samples.h"

#define ORACLE_SECRET	"oracle-secret"
#define LAC_ADDR	0xc0000201u	/* 192.0.2.1 */
#define LNS_ADDR	0xc0000202u	/* 192.0.2.2 */
#define L2TP_PORT	1701
#define IPPROTO_L2TP	115
#define IPPROTO_UDP_	17
#define LINKTYPE_RAW	101
#define PKT_MAX		(20 + 8 + L2TP_MAX_MSG)

static const uint8_t hide_rv[] = { 0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
				   0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0 };

static int put32(FILE *f, uint32_t v)
{
	return fwrite(&v, 4, 1, f) == 1 ? 0 : -1;	/* host order, as pcap wants */
}

static int pcap_open(FILE **f, const char *dir, const char *name)
{
	char path[4096];
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*f = fopen(path, "wb");
	if (*f == NULL) {
		fprintf(stderr, "wire-oracle-gen: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc |= put32(*f, 0xa1b2c3d4);
	rc |= put32(*f, 2 | 4 << 16);	/* version 2.4 */
	rc |= put32(*f, 0);
	rc |= put32(*f, 0);
	rc |= put32(*f, 65535);
	rc |= put32(*f, LINKTYPE_RAW);
	return rc;
}

static int pcap_write(FILE *f, unsigned n, const uint8_t *p, size_t len)
{
	int rc = 0;

	rc |= put32(f, 1700000000u + n);
	rc |= put32(f, 0);
	rc |= put32(f, (uint32_t)len);
	rc |= put32(f, (uint32_t)len);
	if (fwrite(p, 1, len, f) != len)
		rc = -1;
	return rc;
}

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += usl_get_be16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* IPv4 header at p for a payload of len; returns the header length. */
static size_t ipv4(uint8_t *p, uint8_t proto, bool from_lac, size_t len)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	usl_put_be16(p + 2, (uint16_t)(20 + len));
	p[8] = 64;
	p[9] = proto;
	usl_put_be32(p + 12, from_lac ? LAC_ADDR : LNS_ADDR);
	usl_put_be32(p + 16, from_lac ? LNS_ADDR : LAC_ADDR);
	usl_put_be16(p + 10, fold(sum16(p, 20, 0)));
	return 20;
}

/* UDP header at p (after the IPv4 one at ip) with its checksum (4.1.2.3: MUST). */
static void udp(uint8_t *ip, uint8_t *p, size_t payload)
{
	uint16_t len = (uint16_t)(8 + payload);
	uint32_t sum;
	uint16_t c;

	usl_put_be16(p, L2TP_PORT);
	usl_put_be16(p + 2, L2TP_PORT);
	usl_put_be16(p + 4, len);
	usl_put_be16(p + 6, 0);
	sum = sum16(ip + 12, 8, 0) + IPPROTO_UDP_ + len;
	c = fold(sum16(p, len, sum));
	usl_put_be16(p + 6, c ? c : 0xffff);
}

/* The key/nonce state of each side, as the FSM would keep it. */
struct side {
	struct l2tp_auth auth;
};

static void auth_setup(struct side *lac, struct side *lns, enum l2tp_digest_type type)
{
	struct l2tp_msg m;

	l2tp_auth_init(&lac->auth);
	l2tp_auth_init(&lns->auth);
	l2tp_auth_add_key(&lac->auth, type, (const uint8_t *)ORACLE_SECRET, strlen(ORACLE_SECRET));
	l2tp_auth_add_key(&lns->auth, type, (const uint8_t *)ORACLE_SECRET, strlen(ORACLE_SECRET));
	/* the nonces the samples advertise in their SCCRQ and SCCRP */
	sample_build(0, &m);
	memcpy(lac->auth.local_nonce, m.nonce.p, m.nonce.len);
	lac->auth.local_nonce_len = (uint8_t)m.nonce.len;
	l2tp_auth_set_peer_nonce(&lns->auth, &m.nonce);
	sample_build(1, &m);
	memcpy(lns->auth.local_nonce, m.nonce.p, m.nonce.len);
	lns->auth.local_nonce_len = (uint8_t)m.nonce.len;
	l2tp_auth_set_peer_nonce(&lac->auth, &m.nonce);
}

/* Hides what 5.4 lets us hide in sample m (types below 64 and above). */
static void hide_masks(const struct l2tp_msg *m, uint64_t *lo, uint64_t *hi)
{
	const struct l2tp_avp_rule *r;
	unsigned t;

	*lo = *hi = 0;
	for (t = 1; t <= L2TP_AVP_MAX_KNOWN; t++) {
		r = l2tp_avp_rule((uint16_t)t);
		if (r && (r->flags & L2TP_AVPR_HIDE_OK) && !(r->flags & L2TP_AVPR_RECV_ONLY) &&
		    l2tp_msg_has(m, t)) {
			if (t < 64)
				*lo |= L2TP_AVP_BIT(t);
			else
				*hi |= L2TP_AVP_BIT(t - 64);
		}
	}
}

/*
 * Encodes sample i at the L2TP offset of pkt; with auth, signed by the
 * sending side and with its hideable AVPs hidden.  Returns the L2TP length.
 */
static int build(unsigned i, uint8_t *l2tp, size_t cap, bool ip, struct side *sides)
{
	static const struct l2tp_secret secret = {
		(const uint8_t *)ORACLE_SECRET, sizeof(ORACLE_SECRET) - 1
	};
	const struct l2tp_auth *a = NULL;
	uint64_t lo = 0, hi = 0;
	struct l2tp_msg m;
	int len;

	sample_build(i, &m);
	if (sides) {
		a = &sides[samples[i].from_lac ? 0 : 1].auth;
		l2tp_auth_prepare(a, &m);
		if (!l2tp_msg_has(&m, L2TP_AVP_RANDOM_VECTOR)) {
			m.random_vector.p = hide_rv;
			m.random_vector.len = sizeof(hide_rv);
			l2tp_msg_set(&m, L2TP_AVP_RANDOM_VECTOR);
		}
		hide_masks(&m, &lo, &hi);
	}
	len = l2tp_msg_encode2(&m, l2tp, cap, ip, lo, hi, &secret);
	if (len < 0 || (a && l2tp_auth_sign(a, l2tp, (size_t)len, ip) < 0)) {
		fprintf(stderr, "wire-oracle-gen: cannot build %s\n", samples[i].name);
		return -1;
	}
	return len;
}

/* auth: an enum l2tp_digest_type, or -1 for none */
static int write_file(const char *dir, const char *name, bool ip, int auth)
{
	struct side sides[2], *sp = NULL;
	uint8_t pkt[PKT_MAX];
	size_t hl, pl;
	unsigned i, n = 0;
	FILE *f;
	int len, rc;

	if (auth >= 0) {
		auth_setup(&sides[0], &sides[1], (enum l2tp_digest_type)auth);
		sp = sides;
	}
	rc = pcap_open(&f, dir, name);
	for (i = 0; rc == 0 && i < n_samples; i++) {
		if (sp && samples[i].type == L2TP_MSG_ZLB)
			continue;
		hl = 20 + (ip ? 0 : 8);
		len = build(i, pkt + hl, sizeof(pkt) - hl, ip, sp);
		if (len < 0) {
			rc = -1;
			break;
		}
		pl = (size_t)len + (ip ? 0 : 8);
		ipv4(pkt, ip ? IPPROTO_L2TP : IPPROTO_UDP_, samples[i].from_lac, pl);
		if (!ip)
			udp(pkt, pkt + 20, (size_t)len);
		rc = pcap_write(f, n++, pkt, 20 + pl);
	}
	if (f && fclose(f) != 0)
		rc = -1;
	return rc;
}

/* What tshark -T fields -e l2tp.avp.message_type -e l2tp.ccid -e l2tp.Ns -e l2tp.Nr prints. */
static int write_expected(const char *dir)
{
	struct l2tp_msg m;
	char path[4096];
	unsigned i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/expected.txt", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	for (i = 0; i < n_samples; i++) {
		sample_build(i, &m);
		if (m.type == L2TP_MSG_ZLB)
			fprintf(f, "\t0x%08x\t%u\t%u\n", m.ccid, m.ns, m.nr);
		else
			fprintf(f, "%u\t0x%08x\t%u\t%u\n", m.type, m.ccid, m.ns, m.nr);
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* One raw message per file, both encapsulations and with auth: the fuzz seeds. */
static int write_seeds(const char *dir)
{
	struct side sides[2];
	uint8_t l2tp[L2TP_MAX_MSG + 4];
	char path[4096];
	unsigned i, v;
	FILE *f;
	int len;

	auth_setup(&sides[0], &sides[1], L2TP_DIGEST_HMAC_MD5);
	for (i = 0; i < n_samples; i++) {
		for (v = 0; v < 4; v++) {
			if ((v & 2) && samples[i].type == L2TP_MSG_ZLB)
				continue;	/* no ZLB with authentication */
			/* the fuzz target takes the session0 flag from the first octet */
			len = build(i, l2tp + 1, sizeof(l2tp) - 1, v & 1, (v & 2) ? sides : NULL);
			if (len < 0)
				return -1;
			l2tp[0] = (uint8_t)v;
			snprintf(path, sizeof(path), "%s/%02u-%s-%s%s", dir, i, samples[i].name,
				 (v & 1) ? "ip" : "udp", (v & 2) ? "-auth" : "");
			f = fopen(path, "wb");
			if (f == NULL || fwrite(l2tp, 1, (size_t)len + 1, f) != (size_t)len + 1) {
				fprintf(stderr, "wire-oracle-gen: %s: %s\n", path, strerror(errno));
				if (f)
					fclose(f);
				return -1;
			}
			fclose(f);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc == 3 && strcmp(argv[1], "-s") == 0)
		return write_seeds(argv[2]) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
	if (argc != 2) {
		fprintf(stderr, "usage: wire-oracle-gen DIR | -s DIR\n");
		return 2;
	}
	rc |= write_file(argv[1], "udp.pcap", false, -1);
	rc |= write_file(argv[1], "ip.pcap", true, -1);
	rc |= write_file(argv[1], "auth-udp.pcap", false, L2TP_DIGEST_HMAC_MD5);
	rc |= write_file(argv[1], "auth-ip.pcap", true, L2TP_DIGEST_HMAC_SHA1);
	rc |= write_expected(argv[1]);
	return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
