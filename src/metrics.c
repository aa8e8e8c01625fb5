/*
 * src/metrics.c - the daemon's counters and gauges in the Prometheus text
 * exposition format (0.0.4): `l2tpv3ctl metrics` prints them (for
 * node_exporter's textfile collector), and with `metrics_listen` set the
 * daemon serves them on /metrics itself, on its own loop (no thread): one
 * request per connection, at most 16 connections, each closed 10 s after
 * its accept whatever it did, and accepting paused, never spinning, when
 * descriptors run out.
 *
 * Names follow Prometheus conventions: the l2tpv3d_ prefix, _total on
 * counters, base units (seconds).  Every series of a family is always
 * present (zero included) so that rate() and alerts see stable series.
 * A scrape walks the tunnels and their sessions once: O(n) per scrape,
 * nothing per packet.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "acceptor.h"
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

#define MX_MAX_CLIENTS		16	/* scrapes at once; more are refused at once */
#define MX_DEADLINE_S		10	/* a connection's whole life, however busy */
#define MX_MAX_REQUEST		8192	/* request line and headers */

/* One HTTP client: it sends its request, gets the reply, and goes. */
struct mx_conn {
	struct usl_list link;		/* mx.conns */
	struct bufferevent *bev;
	struct usl_timer deadline;	/* from the accept: the connection's end */
	size_t scanned;			/* input searched for the headers' end */
	enum { MX_REQUEST, MX_REPLY, MX_LINGER } state;
};

static struct {
	struct acceptor acceptor;	/* the listening socket */
	struct usl_list conns;
	unsigned clients;		/* connected now */
	uint64_t scrapes;
	uint64_t refused_max;		/* over MX_MAX_CLIENTS */
	uint64_t refused_nofd;		/* accepts failed for want of descriptors */
	uint64_t dropped;		/* cut off at the deadline before their reply was out */
} mx = { .acceptor = { .fd = -1, .reserve_fd = -1 }, .conns = USL_LIST_INIT(mx.conns) };

static struct log_ratelimit mx_accept_rl = LOG_RATELIMIT_INIT(10, 5);
static struct log_ratelimit mx_drop_rl = LOG_RATELIMIT_INIT(10, 5);

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
	family(f, "l2tpv3d_metrics_clients", "gauge", "Connected HTTP clients of /metrics.");
	sample(f, "l2tpv3d_metrics_clients", mx.clients);
	family(f, "l2tpv3d_metrics_clients_refused_total", "counter",
	       "HTTP clients refused (16 connected, out of descriptors).");
	labelled(f, "l2tpv3d_metrics_clients_refused_total", "reason", "max_clients", mx.refused_max);
	labelled(f, "l2tpv3d_metrics_clients_refused_total", "reason", "no_descriptor",
		 mx.refused_nofd);
	family(f, "l2tpv3d_metrics_clients_dropped_total", "counter",
	       "HTTP clients cut off at the 10 s deadline before their reply was written.");
	sample(f, "l2tpv3d_metrics_clients_dropped_total", mx.dropped);
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

/*
 * One request per connection: the reply says "Connection: close", so a
 * connection's whole life (request, reply, the client's close) fits one
 * absolute deadline, which a client sending a byte at a time cannot
 * stretch.  libevent 2.1's evhttp cannot do this: it has no connection
 * cap, its timeout is per read, it cannot be handed an accepted socket,
 * and its listener spins when accept() fails for want of descriptors.
 */
static void conn_free(struct mx_conn *c)
{
	usl_list_del(&c->link);
	usl_timer_cancel(&c->deadline);
	bufferevent_free(c->bev);
	free(c);
	mx.clients--;
}

static void free_text(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

/* Queues the whole reply; the body only when it is not a HEAD. */
static void reply(struct mx_conn *c, const char *status, const char *extra,
		  char *body, size_t len, bool head, const char *type)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	evbuffer_add_printf(out, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			    "Connection: close\r\n%s\r\n", status, type, len, extra);
	if (!head && len > 0 && evbuffer_add_reference(out, body, len, free_text, NULL) == 0)
		body = NULL;
	free(body);
	c->state = MX_REPLY;
	bufferevent_disable(c->bev, EV_READ);
}

static void reply_error(struct mx_conn *c, const char *status, const char *extra, bool head)
{
	char *body = NULL;
	int n = asprintf(&body, "%s\n", status);

	reply(c, status, extra, n < 0 ? NULL : body, n < 0 ? 0 : (size_t)n, head,
	      "text/plain; charset=utf-8");
}

/* The request line: METHOD SP TARGET SP HTTP/1.x; the headers are not read. */
static void serve(struct mx_conn *c, char *line)
{
	char *method = line, *target, *version;
	bool head;
	size_t len;
	char *text;

	target = strchr(method, ' ');
	version = target == NULL ? NULL : strchr(target + 1, ' ');
	if (version == NULL || target == method || target[1] != '/' ||
	    strncmp(version + 1, "HTTP/1.", 7) != 0) {
		reply_error(c, "400 Bad Request", "", false);
		return;
	}
	*target++ = '\0';
	*version = '\0';
	head = strcmp(method, "HEAD") == 0;
	if (strcmp(target, "/metrics") != 0 && strncmp(target, "/metrics?", 9) != 0) {
		reply_error(c, "404 Not Found (try /metrics)", "", head);
		return;
	}
	if (!head && strcmp(method, "GET") != 0) {
		reply_error(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", false);
		return;
	}
	mx.scrapes++;		/* this one included */
	text = metrics_text(&len);
	if (text == NULL) {
		reply_error(c, "500 Internal Server Error", "", head);
		return;
	}
	reply(c, "200 OK", "", text, len, head, "text/plain; version=0.0.4; charset=utf-8");
}

/* Where the request's headers end (an empty line, CRLF or LF), or NULL. */
static const char *headers_end(const char *p, size_t len, size_t from)
{
	for (size_t i = from; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 < len && p[i + 1] == '\n')
			return p + i + 2;
		if (i + 2 < len && p[i + 1] == '\r' && p[i + 2] == '\n')
			return p + i + 3;
	}
	return NULL;
}

static void conn_read(struct bufferevent *bev, void *arg)
{
	struct mx_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in);
	char *p, *eol;

	if (c->state != MX_REQUEST) {
		evbuffer_drain(in, len);	/* lingering: whatever the client still sends */
		return;
	}
	if (len > MX_MAX_REQUEST)
		len = MX_MAX_REQUEST;
	p = (char *)evbuffer_pullup(in, (ssize_t)len);
	if (p == NULL || headers_end(p, len, c->scanned) == NULL) {
		if (len == MX_MAX_REQUEST)
			reply_error(c, "431 Request Header Fields Too Large", "", false);
		c->scanned = len > 2 ? len - 2 : 0;	/* an empty line may straddle reads */
		return;
	}
	eol = memchr(p, '\n', len);	/* there is one: the headers ended */
	if (eol > p && eol[-1] == '\r')
		eol--;
	*eol = '\0';
	serve(c, p);
	evbuffer_drain(in, evbuffer_get_length(in));
}

/* The reply is out: half-close, then read until the client closes (no RST on its data). */
static void conn_write(struct bufferevent *bev, void *arg)
{
	struct mx_conn *c = arg;

	if (c->state != MX_REPLY || evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return;
	c->state = MX_LINGER;
	shutdown(bufferevent_getfd(bev), SHUT_WR);
	bufferevent_enable(bev, EV_READ);
}

static void conn_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(arg);
}

static void conn_deadline(struct usl_timer *t)
{
	struct mx_conn *c = usl_container_of(t, struct mx_conn, deadline);

	if (c->state != MX_LINGER) {
		mx.dropped++;
		log_warnx_rl(&mx_drop_rl, usl_timerset_now(l2tpd.timers),
			     "metrics: a client still connected after %d s: closed",
			     MX_DEADLINE_S);
	}
	conn_free(c);
}

/* Best effort: one line saying why, then the close. */
static void refuse(int cfd, const char *why)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "HTTP/1.1 503 Service Unavailable\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
			 strlen(why) + 1, why);

	if (n > 0 && (size_t)n < sizeof(msg))
		(void)send(cfd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(cfd);
}

static void on_accept(int fd, short what, void *arg)
{
	struct mx_conn *c;
	int cfd;

	(void)fd;
	(void)what;
	(void)arg;
	cfd = acceptor_accept(&mx.acceptor);
	if (cfd < 0)
		return;
	if (mx.clients >= MX_MAX_CLIENTS) {
		mx.refused_max++;
		log_warnx_rl(&mx_accept_rl, usl_timerset_now(l2tpd.timers),
			     "metrics: %u clients connected: refusing another", mx.clients);
		refuse(cfd, "too many connections");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->bev = bufferevent_socket_new(usl_loop_base(l2tpd.loop), cfd,
							    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		free(c);
		close(cfd);
		return;
	}
	mx.clients++;
	usl_list_add_tail(&mx.conns, &c->link);
	usl_timer_init(&c->deadline, conn_deadline);
	usl_timer_arm(l2tpd.timers, &c->deadline, usl_time_s(MX_DEADLINE_S));
	bufferevent_setcb(c->bev, conn_read, conn_write, conn_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* "ADDR:PORT" or "[V6]:PORT" into an address; -1 when it is neither. */
static int parse_listen(const char *s, union saddr *sa, socklen_t *salen)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
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
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, host, &sa->in4.sin_addr) == 1) {
		sa->in4.sin_family = AF_INET;
		sa->in4.sin_port = htons((uint16_t)p);
		*salen = sizeof(sa->in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sa->in6.sin6_addr) == 1) {
		sa->in6.sin6_family = AF_INET6;
		sa->in6.sin6_port = htons((uint16_t)p);
		*salen = sizeof(sa->in6);
		return 0;
	}
	return -1;
}

static bool is_loopback(const union saddr *sa)
{
	const struct in6_addr *a6 = &sa->in6.sin6_addr;

	if (sa->sa.sa_family == AF_INET)
		return (ntohl(sa->in4.sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

int metrics_init(const struct l2tpd_config *c, char *err, size_t errlen)
{
	union saddr sa;
	socklen_t salen;
	int one = 1;

	if (c->metrics_listen[0] == '\0')
		return 0;
	if (parse_listen(c->metrics_listen, &sa, &salen) < 0) {
		snprintf(err, errlen, "metrics_listen '%s': not ADDRESS:PORT", c->metrics_listen);
		return -1;
	}
	mx.acceptor = (struct acceptor){
		.reserve_fd = -1, .rl = LOG_RATELIMIT_INIT(10, 5), .what = "metrics",
		.refuse = refuse, .starved = &mx.refused_nofd,
	};
	mx.acceptor.fd = socket(sa.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (mx.acceptor.fd < 0 ||
	    setsockopt(mx.acceptor.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(mx.acceptor.fd, &sa.sa, salen) < 0 || listen(mx.acceptor.fd, 128) < 0) {
		snprintf(err, errlen, "metrics_listen %s: cannot listen: %s", c->metrics_listen,
			 strerror(errno));
		acceptor_stop(&mx.acceptor);
		return -1;
	}
	if (acceptor_start(&mx.acceptor, on_accept, NULL) < 0) {
		snprintf(err, errlen, "metrics: cannot watch the listening socket");
		acceptor_stop(&mx.acceptor);
		return -1;
	}
	log_info("metrics: serving /metrics on %s", c->metrics_listen);
	if (!is_loopback(&sa))
		log_warnx("metrics: %s is not a loopback address: /metrics has no authentication "
			  "and lists every peer's address", c->metrics_listen);
	return 0;
}

void metrics_shutdown(void)
{
	while (!usl_list_empty(&mx.conns))
		conn_free(usl_list_first_entry(&mx.conns, struct mx_conn, link));
	acceptor_stop(&mx.acceptor);
}
