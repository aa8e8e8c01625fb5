/*
 * src/metrics.c - the daemon's counters and gauges in the Prometheus text
 * exposition format (0.0.4): `l2tpv3ctl metrics` prints them (for
 * node_exporter's textfile collector), and with `metrics_listen` set the
 * daemon serves them on /metrics itself, with libevent's evhttp on its own
 * loop (no thread).
 *
 * Names follow Prometheus conventions: the l2tpv3d_ prefix, _total on
 * counters, base units (seconds).  Every series of a family is always
 * present (zero included) so that rate() and alerts see stable series.
 * A scrape walks the tunnels and their sessions once: O(n) per scrape,
 * nothing per packet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event2/buffer.h>
#include <event2/http.h>

#include "dp.h"
#include "l2tpv3d.h"
#include "usl/log.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* What one walk over the tunnels gathers. */
struct census {
	unsigned tunnels[L2TP_CC_STATE__COUNT];
	unsigned sessions[L2TP_SESS_STATE__COUNT];
	unsigned dp_failed_tunnels, dp_failed_sessions;
	uint64_t live_retransmits;
};

static struct {
	struct evhttp *http;
	struct evhttp_bound_socket *sock;
	uint64_t scrapes;
} mx;

static void census_take(struct census *c)
{
	struct usl_rb_node *n;
	struct l2tp_cc_stats st;

	memset(c, 0, sizeof(*c));
	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		const struct tunnel *t = usl_rb_entry(n, struct tunnel, by_order);
		struct usl_list *pos;

		c->tunnels[l2tp_cc_state(t->cc)]++;
		if (l2tp_cc_dp_state(t->cc) == L2TP_DP_FAILED)
			c->dp_failed_tunnels++;
		l2tp_cc_get_stats(t->cc, &st);
		c->live_retransmits += st.retransmits;
		usl_list_foreach(pos, &t->sessions) {
			const struct session *s = usl_container_of(pos, struct session, tunnel_link);

			if (s->sess == NULL)
				continue;
			c->sessions[l2tp_sess_state(s->sess)]++;
			if (l2tp_sess_dp_state(s->sess) == L2TP_DP_FAILED)
				c->dp_failed_sessions++;
		}
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(FILE *f, const char *name, uint64_t v)
{
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

/* Label values here are state, type and reason names and addresses: no escaping needed. */
static void labelled(FILE *f, const char *name, const char *label, const char *value, uint64_t v)
{
	fprintf(f, "%s{%s=\"%s\"} %llu\n", name, label, value, (unsigned long long)v);
}

/* The message types RFC 3931 names (and ZLB, ACK): unnamed ones are never counted. */
static bool type_named(unsigned i)
{
	return i <= 14 || i == L2TP_MSG_ACK;
}

static void by_msg_type(FILE *f, const char *name, const char *help, const uint64_t *counts)
{
	family(f, name, "counter", help);
	for (unsigned i = 0; i <= L2TP_MSG_TYPE_MAX; i++)
		if (type_named(i))
			labelled(f, name, "type", l2tp_msg_type_name((uint16_t)i), counts[i]);
}

static void states(FILE *f, const struct census *c)
{
	family(f, "l2tpv3d_tunnels", "gauge", "Control connections by state.");
	for (int i = 0; i < L2TP_CC_STATE__COUNT; i++)
		if (i != L2TP_CC_CLOSED)
			labelled(f, "l2tpv3d_tunnels", "state", l2tp_cc_state_name(i), c->tunnels[i]);
	family(f, "l2tpv3d_sessions", "gauge", "Sessions by state.");
	for (int i = 0; i < L2TP_SESS_STATE__COUNT; i++)
		if (i != L2TP_SESS_CLOSED)
			labelled(f, "l2tpv3d_sessions", "state", l2tp_sess_state_name(i),
				 c->sessions[i]);
	family(f, "l2tpv3d_half_open_tunnels", "gauge",
	       "Control connections between their first message and established.");
	sample(f, "l2tpv3d_half_open_tunnels", l2tpd.n_half_open);
	family(f, "l2tpv3d_dataplane_failed", "gauge",
	       "Tunnels and sessions the data plane refused.");
	labelled(f, "l2tpv3d_dataplane_failed", "object", "tunnel", c->dp_failed_tunnels);
	labelled(f, "l2tpv3d_dataplane_failed", "object", "session", c->dp_failed_sessions);
}

static void peers(FILE *f)
{
	struct usl_hnode *n;

	family(f, "l2tpv3d_peer_tunnels", "gauge", "Control connections per peer address.");
	for (n = usl_hash_first(&l2tpd.peers); n != NULL; n = usl_hash_next(&l2tpd.peers, n)) {
		const struct peer *p = usl_hash_entry(n, struct peer, hnode);
		const void *in = p->addr.sa.sa_family == AF_INET6 ?
			(const void *)&p->addr.in6.sin6_addr : (const void *)&p->addr.in4.sin_addr;
		char a[INET6_ADDRSTRLEN];
		struct usl_list *pos;
		unsigned k = 0;

		usl_list_foreach(pos, &p->tunnels)
			k++;
		if (inet_ntop(p->addr.sa.sa_family, in, a, sizeof(a)) != NULL)
			labelled(f, "l2tpv3d_peer_tunnels", "peer", a, k);
	}
}

static void traffic(FILE *f, const struct census *c)
{
	const struct l2tpd_stats *st = &l2tpd.stats;

	by_msg_type(f, "l2tpv3d_messages_received_total", "Control messages received, by type.",
		    st->rx_msgs);
	by_msg_type(f, "l2tpv3d_messages_sent_total", "Control messages sent, by type.",
		    st->tx_msgs);
	family(f, "l2tpv3d_retransmissions_total", "counter", "Control messages retransmitted.");
	sample(f, "l2tpv3d_retransmissions_total", st->retransmits + c->live_retransmits);
	family(f, "l2tpv3d_dropped_messages_total", "counter",
	       "Messages dropped before or by a control connection, by reason.");
	for (int i = 1; i < L2TP_DROP__COUNT; i++)
		labelled(f, "l2tpv3d_dropped_messages_total", "reason", l2tp_drop_name(i),
			 st->drops[i]);
	family(f, "l2tpv3d_datagrams_received_total", "counter", "Datagrams read from sockets.");
	sample(f, "l2tpv3d_datagrams_received_total", st->rx_datagrams);
	family(f, "l2tpv3d_datagrams_sent_total", "counter", "Datagrams sent.");
	sample(f, "l2tpv3d_datagrams_sent_total", st->tx_datagrams);
	family(f, "l2tpv3d_send_errors_total", "counter", "Datagrams the kernel refused to send.");
	sample(f, "l2tpv3d_send_errors_total", st->tx_errors);
	family(f, "l2tpv3d_udp_receive_buffer_errors_total", "counter",
	       "UDP datagrams the kernel dropped for a full receive buffer (network namespace).");
	sample(f, "l2tpv3d_udp_receive_buffer_errors_total", transport_udp_rcvbuf_errors());
	family(f, "l2tpv3d_refusals_total", "counter",
	       "StopCCNs answering SCCRQs nothing was made for; suppressed: over the rate limit.");
	labelled(f, "l2tpv3d_refusals_total", "outcome", "sent", st->refusals_sent);
	labelled(f, "l2tpv3d_refusals_total", "outcome", "suppressed", st->refusals_suppressed);
	family(f, "l2tpv3d_half_open_evicted_total", "counter",
	       "Peers' half-open connections dropped to make room (max_half_open).");
	sample(f, "l2tpv3d_half_open_evicted_total", st->half_open_evicted);
}

static void control(FILE *f)
{
	const struct ctl_counters cc = l2tpd.ctl;

	family(f, "l2tpv3d_ctl_requests_total", "counter", "Control socket requests.");
	sample(f, "l2tpv3d_ctl_requests_total", l2tpd.stats.ctl_requests);
	family(f, "l2tpv3d_ctl_clients", "gauge", "Connected control socket clients.");
	sample(f, "l2tpv3d_ctl_clients", cc.clients);
	family(f, "l2tpv3d_ctl_clients_refused_total", "counter",
	       "Control clients refused (ctl_max_clients, out of descriptors).");
	labelled(f, "l2tpv3d_ctl_clients_refused_total", "reason", "max_clients", cc.refused);
	labelled(f, "l2tpv3d_ctl_clients_refused_total", "reason", "no_descriptor",
		 cc.accept_emfile);
	family(f, "l2tpv3d_ctl_clients_dropped_total", "counter",
	       "Control clients disconnected for not reading (ctl_max_output).");
	sample(f, "l2tpv3d_ctl_clients_dropped_total", cc.dropped_slow);
	family(f, "l2tpv3d_metrics_scrapes_total", "counter", "HTTP scrapes of /metrics.");
	sample(f, "l2tpv3d_metrics_scrapes_total", mx.scrapes);
}

static void identity(FILE *f)
{
	int64_t up_ms = usl_time_to_ms(usl_time_sub(usl_timerset_now(l2tpd.timers), l2tpd.started));

	family(f, "l2tpv3d_build_info", "gauge", "Version, event loop and data plane (always 1).");
	fprintf(f, "l2tpv3d_build_info{version=\"%s\",event_loop=\"%s\",dataplane=\"%s\"} 1\n",
		PACKAGE_VERSION, usl_loop_backend(l2tpd.loop), l2tpd.dp->name);
	family(f, "l2tpv3d_start_time_seconds", "gauge", "When the daemon started (Unix time).");
	fprintf(f, "l2tpv3d_start_time_seconds %lld\n", (long long)(time(NULL) - up_ms / 1000));
}

char *metrics_text(size_t *len)
{
	struct census c;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (f == NULL)
		return NULL;
	census_take(&c);
	identity(f);
	states(f, &c);
	peers(f);
	traffic(f, &c);
	control(f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	if (len != NULL)
		*len = n;
	return buf;
}

/* ---- /metrics over HTTP ------------------------------------------------- */

static void http_metrics(struct evhttp_request *req, void *arg)
{
	struct evbuffer *out;
	size_t len;
	char *text;

	(void)arg;
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_send_error(req, 405, "Method Not Allowed");
		return;
	}
	mx.scrapes++;		/* this one included */
	text = metrics_text(&len);
	out = evbuffer_new();
	if (text == NULL || out == NULL) {
		free(text);
		if (out != NULL)
			evbuffer_free(out);
		evhttp_send_error(req, 500, "Internal Server Error");
		return;
	}
	evbuffer_add(out, text, len);
	free(text);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

static void http_other(struct evhttp_request *req, void *arg)
{
	(void)arg;
	evhttp_send_error(req, 404, "Not Found (try /metrics)");
}

/* "ADDR:PORT" or "[V6]:PORT" into host and port; -1 when it is neither. */
static int host_port(const char *s, char *host, size_t hostlen, unsigned *port)
{
	const char *colon = strrchr(s, ':');
	size_t n;
	char *end;
	unsigned long p;

	if (colon == NULL || colon == s)
		return -1;
	p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p == 0 || p > 65535)
		return -1;
	n = (size_t)(colon - s);
	if (s[0] == '[' && n >= 2 && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	*port = (unsigned)p;
	return 0;
}

int metrics_init(const struct l2tpd_config *c, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 2];
	unsigned port;

	if (c->metrics_listen[0] == '\0')
		return 0;
	if (host_port(c->metrics_listen, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "metrics_listen '%s': not ADDRESS:PORT", c->metrics_listen);
		return -1;
	}
	mx.http = evhttp_new(usl_loop_base(l2tpd.loop));
	if (mx.http == NULL) {
		snprintf(err, errlen, "metrics: cannot create the HTTP server");
		return -1;
	}
	/* scrapes are small: a slow or idle client cannot hold the loop */
	evhttp_set_timeout(mx.http, 10);
	evhttp_set_max_headers_size(mx.http, 8192);
	evhttp_set_max_body_size(mx.http, 1024);
	evhttp_set_cb(mx.http, "/metrics", http_metrics, NULL);
	evhttp_set_gencb(mx.http, http_other, NULL);
	mx.sock = evhttp_bind_socket_with_handle(mx.http, host, (uint16_t)port);
	if (mx.sock == NULL) {
		snprintf(err, errlen, "metrics_listen %s: cannot listen: %s", c->metrics_listen,
			 strerror(errno));
		evhttp_free(mx.http);
		mx.http = NULL;
		return -1;
	}
	log_info("metrics: serving /metrics on %s", c->metrics_listen);
	return 0;
}

void metrics_shutdown(void)
{
	if (mx.http != NULL)
		evhttp_free(mx.http);
	mx.http = NULL;
	mx.sock = NULL;
}
