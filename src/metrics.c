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
 * counters, base units (seconds).  Every series of a daemon-wide family is
 * always present (zero included) so that rate() and alerts see stable
 * series.  A scrape walks the tunnels and their sessions once: O(n) per
 * scrape, nothing per packet.
 *
 * Per-object series carry the names an operator gave (tunnel, session,
 * Remote End ID, peers entry, interface, pseudowire type) on their `_up`
 * gauge and only the identifying ones (names and the local ID) on the
 * others, which keeps 100,000 sessions' scrape small and fast; a static
 * object that is down has its `_up` series all the same, from the
 * configuration, with an empty ID.  Objects are made anew at each
 * connection, so what outlives them (flaps, the time of the last change)
 * is kept here per name, from the events.  A session's data-plane
 * counters come from the data plane's cache, which a scrape asks it to
 * keep fresh (stats_refresh_all: the kernel's is one dump for all, never a
 * request per session, never waited for); a session whose counters it
 * does not know yet has none in the scrape, rather than zeros.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
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
#include "event.h"
#include "l2tpv3d.h"
#include "usl/log.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static void names_gauge(FILE *f);

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
/*
 * Sessions' data-plane counters are at most about this old: the data plane
 * refreshes them all in one go (the kernel's: one netlink dump) at most
 * this often, and only while scrapes come.  Under Prometheus' usual 15 s
 * to 1 min scrape interval, so a scrape sees counters at most this old
 * whatever its own interval; and one dump every 10 s is cheap next to the
 * scrape itself, even at 100,000 sessions (doc/benchmarks.md).
 */
#define MX_STATS_INTERVAL_MS	10000

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

	family(f, "l2tpv3d_peer_tunnels", "gauge",
	       "Established control connections per peer address.");
	for (n = usl_hash_first(&l2tpd.peers); n != NULL; n = usl_hash_next(&l2tpd.peers, n)) {
		const struct peer *p = usl_hash_entry(n, struct peer, hnode);
		const void *in = p->addr.sa.sa_family == AF_INET6 ?
			(const void *)&p->addr.in6.sin6_addr : (const void *)&p->addr.in4.sin_addr;
		char a[INET6_ADDRSTRLEN];
		struct usl_list *pos;
		unsigned k = 0;

		usl_list_foreach(pos, &p->tunnels) {
			const struct tunnel *t = usl_container_of(pos, struct tunnel, peer_link);

			/* a held (stopping) connection is not one the peer has */
			k += l2tp_cc_state(t->cc) == L2TP_CC_ESTABLISHED;
		}
		if (inet_ntop(p->addr.sa.sa_family, in, a, sizeof(a)) != NULL)
			labelled(f, "l2tpv3d_peer_tunnels", "peer", a, k);
	}
}

/*
 * Pool and member names are names (config_table.c's check_name) and
 * addresses: no escaping needed.
 */
static void pool_member_tunnels(const char *pool, const char *member, unsigned tunnels, bool up,
				void *arg)
{
	(void)up;
	fprintf(arg, "l2tpv3d_pool_member_tunnels{pool=\"%s\",member=\"%s\"} %u\n", pool, member,
		tunnels);
}

static void pool_member_up(const char *pool, const char *member, unsigned tunnels, bool up,
			   void *arg)
{
	(void)tunnels;
	fprintf(arg, "l2tpv3d_pool_member_up{pool=\"%s\",member=\"%s\"} %d\n", pool, member, up);
}

static void pools(FILE *f)
{
	/* a family is announced only with samples: none without pools */
	if (l2tpd.conf == NULL || l2tpd.conf->n_lns_pools == 0)
		return;
	family(f, "l2tpv3d_pool_member_tunnels", "gauge",
	       "Tunnels of ours to an LNS pool member, made through the pool and not down.");
	pool_foreach_member(pool_member_tunnels, f);
	family(f, "l2tpv3d_pool_member_up", "gauge",
	       "1 when an LNS pool member takes new tunnels, 0 while it is held down.");
	pool_foreach_member(pool_member_up, f);
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
	names_gauge(f);
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

/* How this process started: a restart that kept everything, or not. */
static void restarts(FILE *f)
{
	struct handover_stats st;

	handover_stats(&st);
	family(f, "l2tpv3d_start_info", "gauge",
	       "How this process started: fresh, restarted (state carried over) or fell-back "
	       "(a handed-over state refused; always 1).");
	fprintf(f, "l2tpv3d_start_info{kind=\"%s\"} 1\n", st.start);
	family(f, "l2tpv3d_restarts_total", "counter",
	       "Restarts that carried the tunnels over since the last fresh start.");
	sample(f, "l2tpv3d_restarts_total", st.restarts);
	family(f, "l2tpv3d_restart_adopted", "gauge",
	       "Tunnels and sessions this process took over from the previous one.");
	labelled(f, "l2tpv3d_restart_adopted", "object", "tunnel", st.tunnels);
	labelled(f, "l2tpv3d_restart_adopted", "object", "session", st.sessions);
	family(f, "l2tpv3d_restart_dropped_tunnels", "gauge",
	       "Handed-over tunnels this process could not take (cleared instead).");
	sample(f, "l2tpv3d_restart_dropped_tunnels", st.dropped);
	family(f, "l2tpv3d_restart_duration_seconds", "gauge",
	       "The last restart, from its request to every tunnel adopted.");
	fprintf(f, "l2tpv3d_restart_duration_seconds %.3f\n", (double)st.restart_ms / 1000);
}

/*
 * Pseudowire redundancy: which path each static session with backups is
 * on, and how often it moved.  Names come from the configuration (no
 * quote or backslash can be in one: check_name).
 */
static void redundancy(FILE *f)
{
	const struct pwred_state *st;

	if (pwred_next(NULL) == NULL)
		return;
	family(f, "l2tpv3d_session_on_backup", "gauge",
	       "1 when a static session with backup tunnels is up through one of them, 0 when "
	       "through its own tunnel or nowhere (tunnel label: where it is up, or \"\").");
	for (st = pwred_next(NULL); st != NULL; st = pwred_next(st))
		fprintf(f, "l2tpv3d_session_on_backup{session=\"%s\",primary=\"%s\",tunnel=\"%s\"} %d\n",
			st->session, st->primary, st->tunnel, st->active_backup && st->tunnel[0]);
	family(f, "l2tpv3d_session_path_switches_total", "counter",
	       "Moves of a static session from one tunnel to another (to a backup and back).");
	for (st = pwred_next(NULL); st != NULL; st = pwred_next(st))
		fprintf(f, "l2tpv3d_session_path_switches_total{session=\"%s\"} %u\n", st->session,
			st->switches);
}

/*
 * The wall-clock start, worked out once per process: "now minus uptime" at
 * every scrape would move by a second between scrapes as the two clocks'
 * seconds roll over apart, and a restart alert on its changes would fire
 * all the time.
 */
static time_t start_time(int64_t up_ms)
{
	static time_t at;
	struct timespec now;

	if (at == 0) {
		clock_gettime(CLOCK_REALTIME, &now);
		at = (time_t)(((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - up_ms + 500) / 1000);
	}
	return at;
}

/* NAME_total{over="0.1"|"1"} and NAME_max_seconds of a usl_stall */
static void stall(FILE *f, const char *name, const struct usl_stall *st, const char *total_help,
		  const char *max_help)
{
	char n[64];

	snprintf(n, sizeof(n), "%s_total", name);
	family(f, n, "counter", total_help);
	fprintf(f, "%s{over=\"0.1\"} %llu\n", n, (unsigned long long)st->over_100ms);
	fprintf(f, "%s{over=\"1\"} %llu\n", n, (unsigned long long)st->over_1s);
	snprintf(n, sizeof(n), "%s_max_seconds", name);
	family(f, n, "gauge", max_help);
	fprintf(f, "%s %.3f\n", n, (double)st->max.ns / 1e9);
}

/* The event loop: a callback that blocked it, and timers run late (blocked or starved). */
static void loop_stalls(FILE *f)
{
	stall(f, "l2tpv3d_loop_busy", usl_loop_busy(l2tpd.loop),
	      "Event-loop callbacks (a socket's, a round of timers, a signal's) that took "
	      "0.1 s or 1 s or longer.", "The longest event-loop callback since the daemon started.");
	stall(f, "l2tpv3d_timers_late", usl_timerset_late(l2tpd.timers),
	      "Rounds of due timers run 0.1 s or 1 s or more past the earliest one's time.",
	      "The latest round of due timers since the daemon started.");
}

static void identity(FILE *f)
{
	int64_t up_ms = usl_time_to_ms(usl_time_sub(usl_timerset_now(l2tpd.timers), l2tpd.started));

	family(f, "l2tpv3d_build_info", "gauge", "Version, event loop and data plane (always 1).");
	fprintf(f, "l2tpv3d_build_info{version=\"%s\",event_loop=\"%s\",dataplane=\"%s\"} 1\n",
		PACKAGE_VERSION, usl_loop_backend(l2tpd.loop), l2tpd.dp->name);
	family(f, "l2tpv3d_start_time_seconds", "gauge", "When the daemon started (Unix time).");
	fprintf(f, "l2tpv3d_start_time_seconds %lld\n", (long long)start_time(up_ms));
	restarts(f);
	redundancy(f);
	loop_stalls(f);
	family(f, "l2tpv3d_config_file_refused", "gauge",
	       "1 while the configuration file is refused and the one a restart handed over runs.");
	sample(f, "l2tpv3d_config_file_refused", l2tpd.conf_refused != NULL ? 1 : 0);
	if (l2tpd.last_reload_at == 0)
		return;
	family(f, "l2tpv3d_last_reload_timestamp_seconds", "gauge",
	       "When the configuration was last reloaded (Unix time).");
	fprintf(f, "l2tpv3d_last_reload_timestamp_seconds %lld\n", (long long)l2tpd.last_reload_at);
	family(f, "l2tpv3d_last_reload_success", "gauge",
	       "1 when the last reload applied the file, 0 when it was refused.");
	sample(f, "l2tpv3d_last_reload_success", l2tpd.last_reload_ok ? 1 : 0);
}

/* ---- per-object series -------------------------------------------------- */

/*
 * What a name has been through.  One per named tunnel and per named session
 * of a named tunnel, made at its first up, down or scrape.  An object made
 * by hand takes its record with it when deleted; configured ones come back
 * under the same name, so theirs stay.  Peer-made ones may come back too,
 * but their names are the peers' to choose: the records of those gone are
 * kept for the MX_GONE_MAX most recently gone, the oldest given up first.
 */
#define MX_GONE_MAX	1024

struct mx_name {
	struct usl_hnode node;		/* mx_names */
	struct usl_list gone_link;	/* mx_gone, while its peer-made object is gone */
	bool gone;
	uint64_t downs;			/* up -> down transitions since the daemon started */
	int64_t changed_ms;		/* Unix time of the last up or down; 0: none seen */
	unsigned gen;			/* the last scrape that listed it */
	bool up;			/* in that scrape */
	size_t keylen;
	char key[];			/* tunnel name NUL [session name NUL] */
};

struct mx_key {
	const char *p;
	size_t len;
};

#define MX_KEY_MAX	512

static struct usl_hash mx_names;
static bool mx_names_ready;
static unsigned mx_gen;
static struct usl_list mx_gone = USL_LIST_INIT(mx_gone);	/* oldest first */
static unsigned mx_n_gone;

static bool name_eq(const struct usl_hnode *n, const void *key)
{
	const struct mx_name *r = usl_hash_entry(n, struct mx_name, node);
	const struct mx_key *k = key;

	return r->keylen == k->len && memcmp(r->key, k->p, k->len) == 0;
}

/* A session's key has two names, a tunnel's one: they never collide. */
static bool name_key(struct mx_key *k, char *buf, const char *tunnel, const char *sess)
{
	size_t a = tunnel ? strlen(tunnel) : 0, b = sess ? strlen(sess) : 0;

	if (a == 0 || (sess != NULL && b == 0) || a + b + 2 > MX_KEY_MAX)
		return false;
	memcpy(buf, tunnel, a + 1);
	if (sess != NULL)
		memcpy(buf + a + 1, sess, b + 1);
	k->p = buf;
	k->len = a + 1 + (sess != NULL ? b + 1 : 0);
	return true;
}

/* The record of a name (made when create), or NULL: unnamed, or out of memory. */
static struct mx_name *name_get(const char *tunnel, const char *sess, bool create)
{
	char buf[MX_KEY_MAX];
	struct mx_key k;
	struct usl_hnode *n;
	struct mx_name *r;
	uint32_t h;

	if (!mx_names_ready || !name_key(&k, buf, tunnel, sess))
		return NULL;
	h = usl_hash_bytes(k.p, k.len, 0);
	n = usl_hash_lookup(&mx_names, &k, h);
	if (n != NULL || !create)
		return n ? usl_hash_entry(n, struct mx_name, node) : NULL;
	r = calloc(1, sizeof(*r) + k.len);
	if (r == NULL)
		return NULL;
	r->keylen = k.len;
	memcpy(r->key, k.p, k.len);
	usl_hash_insert(&mx_names, &r->node, h);
	return r;
}

static int64_t real_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void names_gauge(FILE *f)
{
	family(f, "l2tpv3d_metrics_names", "gauge",
	       "Names whose flaps and last change are kept, and of those, peer-made ones "
	       "whose object is gone (at most 1024, the oldest given up first).");
	labelled(f, "l2tpv3d_metrics_names", "state", "all",
		 mx_names_ready ? usl_hash_count(&mx_names) : 0);
	labelled(f, "l2tpv3d_metrics_names", "state", "gone", mx_n_gone);
}

static void name_free(struct mx_name *r)
{
	if (r->gone) {
		usl_list_del(&r->gone_link);
		mx_n_gone--;
	}
	usl_hash_remove(&mx_names, &r->node);
	free(r);
}

/* A peer-made object went: its record waits for the name to come back, not for ever. */
static void name_gone(struct mx_name *r)
{
	if (r->gone)
		return;
	r->gone = true;
	usl_list_add_tail(&mx_gone, &r->gone_link);
	if (++mx_n_gone > MX_GONE_MAX)
		name_free(usl_list_first_entry(&mx_gone, struct mx_name, gone_link));
}

static void name_back(struct mx_name *r)
{
	if (!r->gone)
		return;
	r->gone = false;
	usl_list_del(&r->gone_link);
	mx_n_gone--;
}

static void mx_on_event(const struct l2tpd_event *ev, void *arg)
{
	const char *sess = ev->s != NULL ? name_str(ev->s->name) : NULL;
	enum origin origin;
	struct mx_name *r;

	(void)arg;
	switch (ev->kind) {
	case EV_TUNNEL_UP:
	case EV_TUNNEL_DOWN:
	case EV_SESSION_UP:
	case EV_SESSION_DOWN:
		r = name_get(ev->t->name, sess, true);
		if (r == NULL)
			return;
		name_back(r);
		r->changed_ms = real_now_ms();
		r->downs += ev->kind == EV_TUNNEL_DOWN || ev->kind == EV_SESSION_DOWN;
		return;
	case EV_TUNNEL_DELETED:
	case EV_SESSION_DELETED:
		origin = ev->s != NULL ? ev->s->origin : ev->t->origin;
		r = name_get(ev->t->name, sess, false);
		if (r == NULL || origin == ORIGIN_CONFIG)
			return;
		if (origin == ORIGIN_CLI)
			name_free(r);
		else
			name_gone(r);
		return;
	default:
		return;
	}
}

/*
 * The output of the per-object families, written by hand: fprintf() per
 * sample is most of the cost at 100,000 sessions.  They are appended to
 * the daemon-wide part's buffer, never copied.  A failed allocation sets
 * oom and stops the writing; the scrape then fails as a whole.
 */
struct obuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static bool ob_room(struct obuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 65536;
	char *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void ob_put(struct obuf *b, const char *s, size_t n)
{
	if (ob_room(b, n)) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

static void ob_str(struct obuf *b, const char *s)
{
	ob_put(b, s, strlen(s));
}

static void ob_u64(struct obuf *b, uint64_t v)
{
	char d[20];
	size_t i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	ob_put(b, d + i, sizeof(d) - i);
}

/* Unix milliseconds as seconds with three decimals. */
static void ob_seconds(struct obuf *b, int64_t ms)
{
	char d[4] = { '.', (char)('0' + ms / 100 % 10), (char)('0' + ms / 10 % 10),
		      (char)('0' + ms % 10) };

	ob_u64(b, ms > 0 ? (uint64_t)ms / 1000 : 0);
	ob_put(b, d, ms > 0 ? 4 : 0);
}

/* ,name="value": the value escaped as the exposition format wants (\\, \", \n). */
static void ob_label(struct obuf *b, bool first, const char *name, const char *value)
{
	const char *p = value, *q;

	if (!first)
		ob_put(b, ",", 1);
	ob_str(b, name);
	ob_put(b, "=\"", 2);
	while ((q = strpbrk(p, "\\\"\n")) != NULL) {
		ob_put(b, p, (size_t)(q - p));
		ob_put(b, *q == '\n' ? "\\n" : *q == '"' ? "\\\"" : "\\\\", 2);
		p = q + 1;
	}
	ob_str(b, p);
	ob_put(b, "\"", 1);
}

static void ob_label_u32(struct obuf *b, const char *name, uint32_t id)
{
	ob_put(b, ",", 1);
	ob_str(b, name);
	ob_put(b, "=\"", 2);
	if (id != 0)
		ob_u64(b, id);
	ob_put(b, "\"", 1);
}

/*
 * One object's series: its labels are written once into the scrape's
 * arena, the identifying ones first, so that every family takes a prefix
 * (the identity) or the whole (every name, for the _up gauge).
 */
struct mx_obj {
	size_t off;			/* in the arena */
	uint32_t id_len, all_len;
	int64_t changed_ms;
	bool up;
};

struct mx_objs {
	struct mx_obj *v;
	size_t n, cap;
};

/* A session's data-plane counters: which session (in scrape.sessions) and what. */
struct mx_ctr {
	size_t obj;
	struct dp_session_stats st;
};

struct mx_ctrs {
	struct mx_ctr *v;
	size_t n, cap;
};

struct scrape {
	struct obuf arena;
	struct mx_objs tunnels, sessions;
	struct mx_ctrs ctrs;		/* the sessions whose counters are known */
	int64_t stats_age_ms;		/* of those counters; -1: none known */
	unsigned static_tunnels_down, static_sessions_down;
	int64_t now_ms;			/* Unix */
	usl_time mono;			/* the same instant on the daemon's clock */
};

static struct mx_obj *obj_add(struct scrape *sc, struct mx_objs *o)
{
	struct mx_obj *v;

	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;

		v = realloc(o->v, cap * sizeof(*v));
		if (v == NULL) {
			sc->arena.oom = true;
			return NULL;
		}
		o->v = v;
		o->cap = cap;
	}
	v = &o->v[o->n++];
	memset(v, 0, sizeof(*v));
	v->off = sc->arena.len;
	return v;
}

static int64_t mono_to_unix_ms(const struct scrape *sc, usl_time t)
{
	return sc->now_ms - usl_time_to_ms(usl_time_sub(sc->mono, t));
}

/* The last change: the name's up or down if one was seen, else the object's own times. */
static int64_t obj_changed(const struct scrape *sc, const struct mx_name *r, bool up,
			   usl_time established, usl_time created)
{
	if (r != NULL && r->changed_ms != 0)
		return r->changed_ms;
	return mono_to_unix_ms(sc, up ? established : created);
}

static void tunnel_obj(struct scrape *sc, const char *name, uint32_t id, const char *peer,
		       const char *peer_entry, const char *description, bool up,
		       int64_t changed_ms)
{
	struct mx_obj *o = obj_add(sc, &sc->tunnels);

	if (o == NULL)
		return;
	ob_label(&sc->arena, true, "tunnel", name);
	ob_label_u32(&sc->arena, "tunnel_id", id);
	o->id_len = (uint32_t)(sc->arena.len - o->off);
	ob_label(&sc->arena, false, "peer", peer);
	ob_label(&sc->arena, false, "peer_entry", peer_entry);
	ob_label(&sc->arena, false, "description", description);
	o->all_len = (uint32_t)(sc->arena.len - o->off);
	o->up = up;
	o->changed_ms = changed_ms;
}

static void session_obj(struct scrape *sc, const char *tunnel, uint32_t id,
			const struct event_names *n, bool up, int64_t changed_ms)
{
	struct mx_obj *o = obj_add(sc, &sc->sessions);

	if (o == NULL)
		return;
	ob_label(&sc->arena, true, "tunnel", tunnel);
	ob_label(&sc->arena, false, "session", n->session);
	ob_label_u32(&sc->arena, "session_id", id);
	o->id_len = (uint32_t)(sc->arena.len - o->off);
	ob_label(&sc->arena, false, "remote_end_id", n->remote_end_id);
	ob_label(&sc->arena, false, "peer_entry", n->peer_entry);
	ob_label(&sc->arena, false, "ifname", n->ifname);
	ob_label(&sc->arena, false, "pw_type", n->pw_type);
	ob_label(&sc->arena, false, "description", n->description);
	o->all_len = (uint32_t)(sc->arena.len - o->off);
	o->up = up;
	o->changed_ms = changed_ms;
}

/* The session just listed (the last of sc->sessions) has these data-plane counters. */
static void ctr_add(struct scrape *sc, const struct dp_session_stats *st)
{
	struct mx_ctrs *c = &sc->ctrs;
	struct mx_ctr *v;

	if (sc->arena.oom || sc->sessions.n == 0)
		return;		/* the session's series failed: the scrape does */
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;

		v = realloc(c->v, cap * sizeof(*v));
		if (v == NULL) {
			sc->arena.oom = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].obj = sc->sessions.n - 1;
	c->v[c->n].st = *st;
	c->n++;
}

/* The name's record, marked as listed by this scrape (and whether it is up). */
static struct mx_name *name_seen(const char *tunnel, const char *sess, bool up)
{
	struct mx_name *r = name_get(tunnel, sess, true);

	if (r != NULL) {
		r->gen = mx_gen;
		r->up = up;
	}
	return r;
}

/* Live objects: not the held (stopping) ones, whose namesakes may be up. */
static void walk_live(struct scrape *sc)
{
	struct usl_rb_node *n;

	for (n = usl_rb_first(&l2tpd.tunnel_order); n != NULL; n = usl_rb_next(n)) {
		const struct tunnel *t = usl_rb_entry(n, struct tunnel, by_order);
		enum l2tp_cc_state st = l2tp_cc_state(t->cc);
		struct event_names en;
		struct mx_name *r;
		struct usl_list *pos;

		if (st == L2TP_CC_STOPPING || st == L2TP_CC_CLOSED)
			continue;
		r = name_seen(t->name, NULL, t->up);
		tunnel_obj(sc, name_str(t->name), t->id, sockaddr_ntop(&t->remote.sa),
			   name_str(t->peer_entry), name_str(t->description), t->up,
			   obj_changed(sc, r, t->up, t->established, t->created));
		usl_list_foreach(pos, &t->sessions) {
			const struct session *s = usl_container_of(pos, struct session, tunnel_link);
			struct dp_session_stats ctr;

			if (s->sess == NULL || l2tp_sess_state(s->sess) == L2TP_SESS_CLOSED)
				continue;
			r = name_seen(t->name, s->name, s->up);
			event_names_get(t, s, &en);
			session_obj(sc, en.tunnel, s->id, &en, s->up,
				    obj_changed(sc, r, s->up, s->established, s->created));
			/* counters not known yet are left out, not reported as 0 */
			if (sc->stats_age_ms >= 0 && l2tpd.dp->session_stats_cached(s, &ctr) == 0)
				ctr_add(sc, &ctr);
		}
	}
}

/* Configured objects with no live object: an _up of 0 each, from the configuration. */
static void walk_static(struct scrape *sc)
{
	const struct l2tpd_config *c = l2tpd.conf;
	int64_t start_ms = mono_to_unix_ms(sc, l2tpd.started);

	for (unsigned i = 0; c != NULL && i < c->n_tunnels; i++) {
		const struct static_tunnel *st = &c->tunnels[i];
		struct mx_name *r = name_get(st->name, NULL, true);

		if (r != NULL && r->gen == mx_gen) {
			sc->static_tunnels_down += !r->up;
		} else {
			/* one held down on purpose (shutdown = true) is no alert */
			sc->static_tunnels_down += !st->shutdown;
			tunnel_obj(sc, st->name, 0, st->pool[0] ? "" :
				   sockaddr_ntop((const struct sockaddr *)&st->peer.ss),
				   "", st->description, false,
				   r && r->changed_ms ? r->changed_ms : start_ms);
			if (r != NULL)
				r->gen = mx_gen;
		}
		for (unsigned j = 0; j < st->n_sessions; j++) {
			const struct static_session *ss = &st->sessions[j];
			struct event_names en = { .tunnel = st->name, .session = ss->name,
						  .peer_entry = "", .ifname = ss->ifname,
						  .pw_type = "", .description = ss->description };

			r = name_get(st->name, ss->name, true);
			if (r != NULL && r->gen == mx_gen) {
				sc->static_sessions_down += !r->up;
				continue;
			}
			sc->static_sessions_down += !st->shutdown && !ss->shutdown;
			snprintf(en.remote_end_id, sizeof(en.remote_end_id), "%s", ss->remote_end_id);
			session_obj(sc, st->name, 0, &en, false,
				    r && r->changed_ms ? r->changed_ms : start_ms);
			if (r != NULL)
				r->gen = mx_gen;
		}
	}
}

static void ob_family(struct obuf *b, const char *name, const char *type, const char *help)
{
	ob_str(b, "# HELP ");
	ob_str(b, name);
	ob_put(b, " ", 1);
	ob_str(b, help);
	ob_str(b, "\n# TYPE ");
	ob_str(b, name);
	ob_put(b, " ", 1);
	ob_str(b, type);
	ob_put(b, "\n", 1);
}

static void ob_sample_start(struct obuf *b, const char *name, const struct scrape *sc,
			    const struct mx_obj *o, bool all)
{
	ob_str(b, name);
	ob_put(b, "{", 1);
	ob_put(b, sc->arena.p + o->off, all ? o->all_len : o->id_len);
	ob_put(b, "} ", 2);
}

static void objs_out(struct obuf *b, const struct scrape *sc, const struct mx_objs *v,
		     const char *what)
{
	char up[64], changed[64];

	if (v->n == 0)
		return;		/* a family is announced with its samples */
	snprintf(up, sizeof(up), "l2tpv3d_%s_up", what);
	snprintf(changed, sizeof(changed), "l2tpv3d_%s_last_change_timestamp_seconds", what);
	ob_family(b, up, "gauge", strcmp(what, "tunnel") == 0 ?
		  "1 when the tunnel is established and in the data plane, else 0; "
		  "a configured tunnel that is down has tunnel_id=\"\"." :
		  "1 when the session is established and in the data plane, else 0; "
		  "a configured session that is down has session_id=\"\".");
	for (size_t i = 0; i < v->n; i++) {
		ob_sample_start(b, up, sc, &v->v[i], true);
		ob_put(b, v->v[i].up ? "1\n" : "0\n", 2);
	}
	ob_family(b, changed, "gauge",
		  "When it last went up or down (Unix time); not yet: when it was created.");
	for (size_t i = 0; i < v->n; i++) {
		ob_sample_start(b, changed, sc, &v->v[i], false);
		ob_seconds(b, v->v[i].changed_ms);
		ob_put(b, "\n", 1);
	}
}

/* Flaps per name: the objects are new at each connection, the names are not. */
static void flaps_out(struct obuf *b, bool sessions)
{
	const char *name = sessions ? "l2tpv3d_session_flaps_total" : "l2tpv3d_tunnel_flaps_total";
	struct usl_hnode *n;
	bool announced = false;

	for (n = usl_hash_first(&mx_names); n != NULL; n = usl_hash_next(&mx_names, n)) {
		const struct mx_name *r = usl_hash_entry(n, struct mx_name, node);
		size_t tl = strlen(r->key);

		if (r->gen != mx_gen || (r->keylen > tl + 1) != sessions)
			continue;
		if (!announced)
			ob_family(b, name, "counter", sessions ?
				  "Times a named session of a named tunnel went from up to down." :
				  "Times a named tunnel went from up to down.");
		announced = true;
		ob_str(b, name);
		ob_put(b, "{", 1);
		ob_label(b, true, "tunnel", r->key);
		if (sessions)
			ob_label(b, false, "session", r->key + tl + 1);
		ob_put(b, "} ", 2);
		ob_u64(b, r->downs);
		ob_put(b, "\n", 1);
	}
}

/* The data plane's per-session counters: the names `session show` gives them. */
static const struct {
	const char *name, *help;
	size_t off;
} mx_ctr_families[] = {
	{ "l2tpv3d_session_rx_packets_total", "Data packets received on the session.",
	  offsetof(struct dp_session_stats, rx_packets) },
	{ "l2tpv3d_session_rx_bytes_total", "Data octets received on the session.",
	  offsetof(struct dp_session_stats, rx_bytes) },
	{ "l2tpv3d_session_rx_errors_total", "Data packets received with errors.",
	  offsetof(struct dp_session_stats, rx_errors) },
	{ "l2tpv3d_session_tx_packets_total", "Data packets sent on the session.",
	  offsetof(struct dp_session_stats, tx_packets) },
	{ "l2tpv3d_session_tx_bytes_total", "Data octets sent on the session.",
	  offsetof(struct dp_session_stats, tx_bytes) },
	{ "l2tpv3d_session_tx_errors_total", "Data packets the data plane failed to send.",
	  offsetof(struct dp_session_stats, tx_errors) },
	{ "l2tpv3d_session_rx_seq_discards_total",
	  "Data packets discarded for their sequence number.",
	  offsetof(struct dp_session_stats, rx_seq_discards) },
	{ "l2tpv3d_session_rx_oos_packets_total", "Data packets received out of sequence.",
	  offsetof(struct dp_session_stats, rx_oos_packets) },
	{ "l2tpv3d_session_rx_cookie_discards_total",
	  "Data packets discarded because their cookie did not match (0 on kernels before 5.7).",
	  offsetof(struct dp_session_stats, rx_cookie_discards) },
};

/*
 * NAME{LABELS} VALUE, with one check for room: a counter family has a
 * line per session and 100,000 sessions, so this is the hot path.
 */
static void ob_ctr(struct obuf *b, const char *name, size_t name_len, const char *labels,
		   size_t labels_len, uint64_t v)
{
	char d[20];
	size_t nd = sizeof(d), len;
	char *p;

	do
		d[--nd] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	len = name_len + labels_len + (sizeof(d) - nd) + 4;
	if (!ob_room(b, len))
		return;
	p = b->p + b->len;
	memcpy(p, name, name_len);
	p += name_len;
	*p++ = '{';
	memcpy(p, labels, labels_len);
	p += labels_len;
	*p++ = '}';
	*p++ = ' ';
	memcpy(p, d + nd, sizeof(d) - nd);
	p += sizeof(d) - nd;
	*p = '\n';
	b->len += len;
}

/* The counters' age, then each counter family over the sessions that have them. */
static void ctrs_out(struct obuf *b, const struct scrape *sc)
{
	if (sc->stats_age_ms < 0)
		return;
	ob_family(b, "l2tpv3d_dataplane_stats_age_seconds", "gauge",
		  "How old the sessions' data-plane counters are at most (refreshed in one go "
		  "while scraped).");
	ob_str(b, "l2tpv3d_dataplane_stats_age_seconds ");
	ob_seconds(b, sc->stats_age_ms);
	ob_put(b, "\n", 1);
	if (sc->ctrs.n == 0)
		return;
	for (size_t f = 0; f < sizeof(mx_ctr_families) / sizeof(mx_ctr_families[0]); f++) {
		const char *name = mx_ctr_families[f].name;
		size_t name_len = strlen(name);

		ob_family(b, name, "counter", mx_ctr_families[f].help);
		for (size_t i = 0; i < sc->ctrs.n; i++) {
			const struct mx_ctr *c = &sc->ctrs.v[i];
			const struct mx_obj *o = &sc->sessions.v[c->obj];
			uint64_t v;

			memcpy(&v, (const char *)&c->st + mx_ctr_families[f].off, sizeof(v));
			ob_ctr(b, name, name_len, sc->arena.p + o->off, o->id_len, v);
		}
	}
}

/* l2tpv3d_static_not_up{object="WHAT"} N */
static void ob_not_up(struct obuf *b, const char *what, unsigned n)
{
	ob_str(b, "l2tpv3d_static_not_up{object=\"");
	ob_str(b, what);
	ob_str(b, "\"} ");
	ob_u64(b, n);
	ob_put(b, "\n", 1);
}

/*
 * Every per-object family appended to out; -1 when out of memory.  Room
 * for as much as the last scrape wrote is made first: growing a buffer
 * of 100 MB by doubling would copy most of it again.
 */
static int objects(struct obuf *out)
{
	static size_t last_len;
	struct scrape sc = { .now_ms = real_now_ms(), .mono = usl_timerset_now(l2tpd.timers),
			     .stats_age_ms = -1 };
	int rc = -1;

	if (last_len > out->len)
		ob_room(out, last_len - out->len);
	mx_gen++;
	/* off (metrics_session_counters = false): none, and nothing refreshed for them */
	if (l2tpd.conf != NULL && l2tpd.conf->metrics_session_counters &&
	    l2tpd.dp->stats_refresh_all != NULL && l2tpd.dp->session_stats_cached != NULL)
		sc.stats_age_ms = l2tpd.dp->stats_refresh_all(MX_STATS_INTERVAL_MS);
	walk_live(&sc);
	walk_static(&sc);
	objs_out(out, &sc, &sc.tunnels, "tunnel");
	if (mx_names_ready)
		flaps_out(out, false);
	objs_out(out, &sc, &sc.sessions, "session");
	if (mx_names_ready)
		flaps_out(out, true);
	ctrs_out(out, &sc);
	ob_family(out, "l2tpv3d_static_not_up", "gauge",
		  "Configured tunnels and sessions that are not up (but for those shut down).");
	ob_not_up(out, "tunnel", sc.static_tunnels_down);
	ob_not_up(out, "session", sc.static_sessions_down);
	if (!sc.arena.oom && !out->oom) {
		last_len = out->len;
		rc = 0;
	}
	free(sc.arena.p);
	free(sc.tunnels.v);
	free(sc.sessions.v);
	free(sc.ctrs.v);
	return rc;
}

char *metrics_text(size_t *len)
{
	struct census c;
	struct obuf out;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (f == NULL)
		return NULL;
	census_take(&c);
	identity(f);
	states(f, &c);
	peers(f);
	pools(f);
	traffic(f, &c);
	control(f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	/* open_memstream's buffer is malloc()ed: the rest goes on its end */
	out = (struct obuf){ .p = buf, .len = n, .cap = n };
	if (objects(&out) < 0) {
		free(out.p);
		return NULL;
	}
	if (len != NULL)
		*len = out.len;
	return out.p;
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

	if (!mx_names_ready && usl_hash_init(&mx_names, 64, name_eq) == 0) {
		if (event_subscribe(mx_on_event, NULL) == 0)
			mx_names_ready = true;
		else
			usl_hash_destroy(&mx_names);
	}
	if (c->metrics_listen[0] == '\0')
		return 0;
	if (sockaddr_parse_host_port(c->metrics_listen, &sa, &salen) < 0) {
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
	if (mx_names_ready) {
		event_unsubscribe(mx_on_event, NULL);
		while (usl_hash_count(&mx_names) > 0)
			name_free(usl_hash_entry(usl_hash_first(&mx_names), struct mx_name, node));
		usl_hash_destroy(&mx_names);
		mx_names_ready = false;
	}
}
