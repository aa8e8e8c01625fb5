/*
 * src/dp_kernel_stats.c - what the engine asks of kernel objects that are
 * up: a session's counters (on demand, while its cookie is watched, and
 * every session's in one dump for the metrics), a change of sequencing,
 * the pseudowire types this host can run, and what `show` describes (an
 * overview: dp_kernel.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_pppox.h>
#include <linux/l2tp.h>

#include "dp_kernel_int.h"
#include "link.h"

/* ---- statistics, modify, describe --------------------------------------------- */

/*
 * Frames discarded for their cookie and not one good frame: every frame
 * the peer sends fails the cookie check.  A peer that ignores the Assigned
 * Cookie AVP (freeRtr) looks like this, and the kernel drops its frames
 * without a word: say it in the log, once per session, and in `show`.
 */
static void cookie_verdict(struct ksession *ks)
{
	const struct session *s = ks->s;

	ks->stats.cookie_mismatch = ks->stats.rx_packets == 0 && ks->stats.rx_cookie_discards > 0;
	if (!ks->stats.cookie_mismatch || ks->cookie_warned || s == NULL)
		return;
	ks->cookie_warned = true;
	log_warnx("session %u (tunnel %u, profile %s): %" PRIu64 " data frames discarded for "
		  "their cookie, none received: the peer ignores our Assigned Cookie (or sends "
		  "another): set cookie_len = 0 for this peer's profile to interoperate",
		  ks->sid, ks->tid, s->prof->name, ks->stats.rx_cookie_discards);
}

static uint64_t attr_u64(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U64) == 0 ? mnl_attr_get_u64(a) : 0;
}

/* A SESSION_GET answer's (or dump part's) counters, tb its attributes, into ks's cache. */
static void stats_set(struct ksession *ks, const struct nlattr **tb)
{
	const struct nlattr *st[L2TP_ATTR_STATS_MAX + 1] = { 0 };
	struct attr_table t = { st, L2TP_ATTR_STATS_MAX };
	struct dp_session_stats *o = &ks->stats;

	if (tb[L2TP_ATTR_STATS] == NULL)
		return;
	mnl_attr_parse_nested(tb[L2TP_ATTR_STATS], attr_cb, &t);
	o->tx_packets = attr_u64(st[L2TP_ATTR_TX_PACKETS]);
	o->tx_bytes = attr_u64(st[L2TP_ATTR_TX_BYTES]);
	o->tx_errors = attr_u64(st[L2TP_ATTR_TX_ERRORS]);
	o->rx_packets = attr_u64(st[L2TP_ATTR_RX_PACKETS]);
	o->rx_bytes = attr_u64(st[L2TP_ATTR_RX_BYTES]);
	o->rx_errors = attr_u64(st[L2TP_ATTR_RX_ERRORS]);
	o->rx_seq_discards = attr_u64(st[L2TP_ATTR_RX_SEQ_DISCARDS]);
	o->rx_oos_packets = attr_u64(st[L2TP_ATTR_RX_OOS_PACKETS]);
	/* kernels before 5.7 do not report it: 0, and describe() says so */
	o->rx_cookie_discards = attr_u64(st[L2TP_ATTR_RX_COOKIE_DISCARDS]);
	ks->cookie_discards_reported = st[L2TP_ATTR_RX_COOKIE_DISCARDS] != NULL;
	ks->stats_valid = true;
	ks->stats_at = now();
	cookie_verdict(ks);
}

static void stats_data(struct kreq *r, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1];

	l2tp_attrs(nlh, tb);
	stats_set(r->obj, tb);
}

/* ENODEV here means what a deletion notice means (the notice may have been lost). */
static void stats_done(struct kreq *r, int err, const char *ext)
{
	struct ksession *ks = r->obj;

	(void)ext;
	ks->stats_pending = false;
	if (err != 0 && !gone(err))
		log_debug("session %u: kernel SESSION_GET: %s", ks->sid, strerror(-err));
	session_check_gone(ks, err);
	ks_put(ks);
}

/* A SESSION_GET (doit) of ks, its answer to data; holds ks; false when out of memory. */
bool session_get_as(struct ksession *ks, kreq_done_fn done, kreq_data_fn data)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_SESSION_GET, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, ks->tid);
	mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, ks->sid);
	if (kreq_submit(nlh, ks, done, data) == NULL)
		return false;
	ks->refs++;
	return true;
}

/* A SESSION_GET (doit) of ks: its counters refresh the cache; false when out of memory. */
bool session_get(struct ksession *ks, kreq_done_fn done)
{
	return session_get_as(ks, done, stats_data);
}

/* One SESSION_GET at a time per session; the cache answers meanwhile. */
static void stats_refresh(struct ksession *ks)
{
	if (!ks->stats_pending && session_get(ks, stats_done))
		ks->stats_pending = true;
}

/*
 * The counters are read on demand (`show`, SNMP); a session that expects a
 * cookie also has them read while it is young and has received nothing, at
 * doubling intervals up to 30 s for its first 5 minutes: 13 SESSION_GETs
 * per session at most, and none once a good frame came or the mismatch was
 * found.
 */
void on_cookie_timer(struct usl_timer *tm)
{
	struct ksession *ks = usl_container_of(tm, struct ksession, cookie_timer);
	int64_t age;

	if (ks->s == NULL || ks->state != K_UP || ks->cookie_warned ||
	    (ks->stats_valid && ks->stats.rx_packets > 0))
		return;
	stats_refresh(ks);
	ks->cookie_look_ms = ks->cookie_look_ms * 2 < COOKIE_LOOK_MAX_MS ?
			     ks->cookie_look_ms * 2 : COOKIE_LOOK_MAX_MS;
	age = usl_time_to_ms(usl_time_sub(now(), ks->up_at));
	if (age + ks->cookie_look_ms <= COOKIE_WATCH_MS)
		usl_timer_arm(l2tpd.timers, tm, usl_time_ms(ks->cookie_look_ms));
}

/* The session is up: watch its counters for a while if it expects a cookie. */
void cookie_watch(struct ksession *ks)
{
	if (ks->prog.cookie_len == 0 || ks->cookie_warned)
		return;
	ks->up_at = now();
	ks->cookie_look_ms = COOKIE_LOOK_MS;
	usl_timer_arm(l2tpd.timers, &ks->cookie_timer, usl_time_ms(COOKIE_LOOK_MS));
}

/*
 * Never blocks: answers from the cache and asks the kernel for fresh
 * counters, which the next call returns.  The first call has no cache yet
 * (EAGAIN: `show` then omits "stats").
 */
int kernel_session_stats(const struct session *s, struct dp_session_stats *st)
{
	struct ksession *ks = s->dp_priv;

	if (ks == NULL || ks->state != K_UP) {
		errno = ENOENT;
		return -1;
	}
	stats_refresh(ks);
	if (!ks->stats_valid) {
		errno = EAGAIN;
		return -1;
	}
	*st = ks->stats;
	return 0;
}

/*
 * Every session's counters for the metrics: one SESSION_GET dump brings
 * them all, never a request per session.  A scrape asks for it when the
 * last is older than its interval and answers from the cache meanwhile;
 * then a timer dumps again one interval after each dump was sent, for as
 * long as scrapes keep coming (STATS_LINGER_MS after the last), so the
 * counters a scrape sees are at most about one interval old whatever the
 * scrape interval, and nothing is dumped on a daemon nobody scrapes.  A
 * kernel whose dump is slow (6.1 walks its lists from the start for every
 * tunnel and session: quadratic) gets a longer interval, so that dumping
 * takes at most 1/STATS_DUTY of the time.  The kernel makes a
 * dump's next part inside the recvmsg() that reads the last one, so the
 * dump has a socket of its own, read STATS_RX_PARTS parts a loop turn:
 * however long the kernel takes over a part, the daemon does its other
 * work between a few of them.  (A socket runs one dump at a time, a second
 * is refused with EBUSY: a restart's sweep, dp_kernel_handover.c, the one
 * other dump at run time, takes its turn through stats_dumping.)
 */
static void stats_dump_data(struct kreq *r, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1];
	struct ksession *ks;

	(void)r;
	l2tp_attrs(nlh, tb);
	ks = ksession_up(attr_u32(tb[L2TP_ATTR_CONN_ID]), attr_u32(tb[L2TP_ATTR_SESSION_ID]));
	if (ks != NULL)		/* not one of ours, or not up: nobody asks for it */
		stats_set(ks, tb);
}

static bool stats_wanted(void)
{
	return usl_time_to_ms(usl_time_sub(now(), kdp.stats_wanted)) < STATS_LINGER_MS;
}

static void stats_dump_done(struct kreq *r, int err, const char *ext)
{
	int64_t took = usl_time_to_ms(usl_time_sub(now(), kdp.stats_started));
	int64_t gap = took * STATS_DUTY > kdp.stats_interval_ms ? took * STATS_DUTY :
		      kdp.stats_interval_ms;

	(void)r;
	kdp.stats_next = usl_time_add(kdp.stats_started, usl_time_ms(gap));
	kdp.stats_dumping = false;
	if (err == 0) {
		kdp.stats_have = true;
		kdp.stats_at = kdp.stats_started;
	} else {
		log_warnx_rl(&nl_rl, now(), "kernel: session counters dump: %s%s%s",
			     strerror(-err), ext ? ": " : "", ext ? ext : "");
	}
	if (stats_wanted())
		usl_timer_arm(l2tpd.timers, &kdp.stats_timer, usl_time_ms(gap - took));
}

static void stats_dump(void)
{
	if (kreq_submit_on(&kdp.dump, l2tp_msg(L2TP_CMD_SESSION_GET, NLM_F_DUMP), NULL,
			   stats_dump_done, stats_dump_data) == NULL)
		return;		/* out of memory: the next scrape tries again */
	kdp.stats_dumping = true;
	kdp.stats_started = now();
}

void on_stats_timer(struct usl_timer *tm)
{
	(void)tm;
	if (!kdp.stats_dumping && stats_wanted())
		stats_dump();
}

int64_t kernel_stats_refresh_all(int64_t interval_ms)
{
	kdp.stats_wanted = now();
	kdp.stats_interval_ms = interval_ms;
	/* an armed timer has the next dump; a dump under way is the next */
	if (!kdp.stats_dumping && !usl_timer_armed(&kdp.stats_timer) &&
	    usl_time_cmp(now(), kdp.stats_next) >= 0)
		stats_dump();
	return kdp.stats_have ? usl_time_to_ms(usl_time_sub(now(), kdp.stats_at)) : -1;
}

/* What the last dump in (or a later SESSION_GET) brought: none older. */
int kernel_session_stats_cached(const struct session *s, struct dp_session_stats *st)
{
	const struct ksession *ks = s->dp_priv;

	if (ks == NULL || ks->state != K_UP) {
		errno = ENOENT;
		return -1;
	}
	if (!kdp.stats_have || !ks->stats_valid || usl_time_cmp(ks->stats_at, kdp.stats_at) < 0) {
		errno = EAGAIN;
		return -1;
	}
	*st = ks->stats;
	return 0;
}

static void modify_done(struct kreq *r, int err, const char *ext)
{
	struct ksession *ks = r->obj;

	if (err != 0 && !gone(err))
		log_kernel_error("session", ks->sid, "SESSION_MODIFY", err, ext);
	ks_put(ks);
}

/* Sequencing as negotiated now, and the interface down while the peer's circuit is. */
int kernel_session_modify(struct session *s)
{
	struct ksession *ks = s->dp_priv;
	struct nlmsghdr *nlh;

	if (ks == NULL || ks->state != K_UP)
		return -ENOTCONN;
	ks->prog.recv_seq = l2tp_sess_data_seq(s->sess) != 0;
	ks->prog.send_seq = l2tp_sess_peer_data_seq(s->sess) != 0;
	nlh = session_seq_msg(ks);
	if (kreq_submit(nlh, ks, modify_done, NULL) == NULL)
		return -ENOMEM;
	ks->refs++;
	if (ks->pw != L2TP_PW_PPP && ks->ifindex)
		return link_set_up(ks->ifindex, l2tp_sess_peer_active(s->sess));
	return 0;
}

/*
 * Ethernet and Ethernet VLAN (an ETH session plus a VLAN device: the kernel
 * has no ETH_VLAN ops), and PPP when this host can run it: the kernel's
 * PPPoL2TP sockets and a pppd to drive them.
 */
static bool ppp_possible(void)
{
	static usl_time checked;
	static bool ok, known;
	int fd;

	/* asked per tunnel: look again every 10 s, not 10,000 times in a storm */
	if (known && usl_time_to_ms(usl_time_sub(now(), checked)) < 10000)
		return ok;
	known = true;
	checked = now();
	ok = false;
	if (access(pppd_path(), X_OK) == 0) {
		fd = socket(AF_PPPOX, SOCK_DGRAM | SOCK_CLOEXEC, PX_PROTO_OL2TP);
		ok = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return ok;
}

unsigned kernel_pw_types(uint16_t *types, unsigned max)
{
	unsigned n = 0;

	if (n < max)
		types[n++] = L2TP_PW_ETH;
	if (n < max)
		types[n++] = L2TP_PW_ETH_VLAN;
	if (n < max && ppp_possible())
		types[n++] = L2TP_PW_PPP;
	return n;
}

static const char *state_name(enum kstate st)
{
	static const char *const names[] = {
		[K_STALE] = "stale", [K_KEPT] = "kept", [K_CREATING] = "creating", [K_LINKING] = "linking",
		[K_READY] = "prepared", [K_UP] = "up", [K_DELETING] = "deleting",
		[K_GONE] = "gone",
	};

	return (unsigned)st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

static json_object *cookie_hex(const uint8_t *c, uint8_t len)
{
	char hex[17] = "";

	for (uint8_t i = 0; i < len && i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", c[i]);
	return json_object_new_string(hex);
}

static json_object *describe_tunnel(const struct tunnel *t)
{
	const struct ktunnel *kt = t->dp_priv;
	json_object *o = json_object_new_object();

	json_add_str(o, "type", "kernel");
	json_object_object_add(o, "programmed", json_object_new_boolean(kt && kt->state == K_UP));
	json_add_str(o, "kernel_state", kt ? state_name(kt->state) : "none");
	json_add_int(o, "conn_id", t->id);
	json_add_int(o, "peer_conn_id", l2tp_cc_peer_ccid(t->cc));
	json_add_str(o, "encap_type", t->encap == L2TP_ENCAP_IP ? "ip" : "udp");
	json_add_int(o, "fd", t->fd);
	if (t->encap == L2TP_ENCAP_UDP)
		json_object_object_add(o, "udp_checksums", json_object_new_boolean(1));
	return o;
}

static json_object *describe_session(const struct session *s)
{
	const struct ksession *ks = s->dp_priv;
	json_object *o = json_object_new_object();
	const uint8_t *c;
	uint8_t len;

	json_add_str(o, "type", "kernel");
	json_object_object_add(o, "programmed", json_object_new_boolean(ks && ks->state == K_UP));
	json_add_str(o, "kernel_state", ks ? state_name(ks->state) : "none");
	json_add_str(o, "ifname", ks ? ks->kname : "");
	if (ks && strcmp(ks->kname, ks->ifname) != 0)
		json_add_str(o, ks->pw == L2TP_PW_PPP ? "ppp_ifname" : "vlan_ifname", ks->ifname);
	json_add_int(o, "ifindex", ks ? ks->ifindex : 0);
	json_add_int(o, "mtu", ks ? ks->mtu : 0);
	json_add_str(o, "pw_type", l2tp_sess_pw_type(s->sess) == L2TP_PW_PPP ? "ppp" : "eth");
	c = l2tp_sess_cookie(s->sess, &len);
	json_object_object_add(o, "cookie", cookie_hex(c, len));
	c = l2tp_sess_peer_cookie(s->sess, &len);
	json_object_object_add(o, "peer_cookie", cookie_hex(c, len));
	json_add_int(o, "l2spec_type", l2tp_sess_peer_l2ss(s->sess) ? 1 : 0);
	json_object_object_add(o, "recv_seq", json_object_new_boolean(l2tp_sess_data_seq(s->sess) != 0));
	json_object_object_add(o, "send_seq",
			       json_object_new_boolean(l2tp_sess_peer_data_seq(s->sess) != 0));
	if (ks && ks->pppd > 0)
		json_add_int(o, "pppd_pid", ks->pppd);
	json_add_int(o, "stats_age_ms", ks && ks->stats_valid ?
		     usl_time_to_ms(usl_time_sub(now(), ks->stats_at)) : -1);
	if (ks && ks->stats_valid)
		json_object_object_add(o, "cookie_discards_reported",
				       json_object_new_boolean(ks->cookie_discards_reported));
	return o;
}

json_object *kernel_describe(const struct tunnel *t, const struct session *s)
{
	if (s == NULL || s->sess == NULL)
		return describe_tunnel(t);
	return describe_session(s);
}
