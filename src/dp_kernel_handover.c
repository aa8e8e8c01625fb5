/*
 * src/dp_kernel_handover.c - the kernel data plane's part in a restart
 * handover (handover.c): each object's record for the next process, and
 * the next process adopting them (an overview: dp_kernel.c).
 *
 * Restart handover.  The start-up cleanup keeps the tunnels a previous
 * process handed over (tunnel_id_kept()): they stay recorded, K_KEPT, and
 * once the watch socket is open each is looked up again, so that a tunnel
 * adopted is one the kernel has now with the same peer id and
 * encapsulation.  A session is adopted on its record (checked on its own,
 * its interfaces by index and name) and looked up in the kernel by its ids
 * at once: an answer that contradicts the record, or none, makes it lost,
 * as a session deleted by hand is.  No dump: Linux 6.1 finds each object
 * of a dump by walking its lists from the start, which takes minutes at
 * 10,000 tunnels.  The daemon adopts before its loop runs; the loop's
 * first turn then deletes the kept tunnels nobody claimed, and a dump on
 * the counters' socket (read a few parts a turn, the daemon answering
 * between them) finds the kernel sessions on our tunnels that no session
 * claims (a call the old process was still clearing) and deletes them.
 */
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <libmnl/libmnl.h>
#include <linux/l2tp.h>

#include "dp_kernel_int.h"
#include "usl/pack.h"

/* ---- restart handover ------------------------------------------------------------ */

/*
 * The record of each handed-over object starts with this; a record of
 * another version (or 0: the old process had nothing up for it) is refused.
 */
#define KREC_VERSION	1
#define NO_COUNTER		UINT32_MAX

/* The kept tunnels, in a list (the hash changes under a walk that frees). */
static unsigned kept_tunnels(struct usl_list *walk)
{
	struct usl_hnode *n;
	unsigned count = 0;

	usl_list_init(walk);
	for (n = usl_hash_first(&kdp.tunnels); n != NULL; n = usl_hash_next(&kdp.tunnels, n)) {
		struct ktunnel *kt = usl_hash_entry(n, struct ktunnel, by_id);

		if (kt->state == K_KEPT) {
			usl_list_add_tail(walk, &kt->link);
			count++;
		}
	}
	return count;
}

/*
 * With the watch socket open (a deletion from now on is heard), the kept
 * tunnels are looked up again: what the adoption checks each record
 * against.  A tunnel gone since the first look is forgotten (its adoption
 * fails, the daemon drops it).
 */
int kept_scan(char *err, size_t errlen)
{
	struct usl_list walk;
	unsigned gone_since = 0;
	int rc;

	if (l2tpd.n_kept_tunnel_ids == 0)
		return 0;
	if ((rc = tunnels_look(K_KEPT, "handed-over", err, errlen)) < 0)
		return rc;
	kept_tunnels(&walk);
	while (!usl_list_empty(&walk)) {
		struct ktunnel *kt = usl_list_first_entry(&walk, struct ktunnel, link);

		usl_list_del(&kt->link);
		if (!kt->present) {
			gone_since++;
			record_del(kt);
		}
	}
	if (gone_since > 0)
		log_warnx("kernel: %u handed-over tunnels vanished during the restart", gone_since);
	/* the daemon adopts before its loop runs: the first turn ends the adoption */
	usl_timer_arm(l2tpd.timers, &kdp.adopt_timer, usl_time_ms(0));
	return 0;
}

/* ---- after the adoption: what nobody claimed ----------------------------------- */

/* The sweep and the adopted sessions' lookups both done: the adoption's last word. */
static void adoption_report(void)
{
	if (kdp.sweeping || kdp.sweep_waiting || kdp.adopt_checking > 0 ||
	    usl_timer_armed(&kdp.adopt_timer))
		return;
	log_info("kernel: handover: %u adopted sessions looked up in the kernel, %u lost; "
		 "%u kernel sessions nobody claimed, deleted", kdp.adopted_sessions, kdp.adopt_lost,
		 kdp.swept);
}

static void orphan_delete_done(struct kreq *r, int err, const char *ext)
{
	if (err != 0 && !gone(err))
		log_kernel_error("session", (uint32_t)(uintptr_t)r->obj, "SESSION_DELETE", err, ext);
}

static bool orphan_delete(uint32_t tid, uint32_t sid)
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_SESSION_DELETE, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, tid);
	mnl_attr_put_u32(nlh, L2TP_ATTR_SESSION_ID, sid);
	return kreq_submit(nlh, (void *)(uintptr_t)sid, orphan_delete_done, NULL) != NULL;
}

/* A session of ours, in whatever state, has this kernel session (or is making it). */
static bool sess_claimed(uint32_t tid, uint32_t sid)
{
	const struct session *s = session_find(sid);
	const struct ksession *ks = s != NULL ? s->dp_priv : NULL;

	return ks != NULL && ks->tid == tid;
}

static void sweep_data(struct kreq *r, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1];
	const struct ktunnel *kt;
	uint32_t tid, sid;

	(void)r;
	l2tp_attrs(nlh, tb);
	tid = attr_u32(tb[L2TP_ATTR_CONN_ID]);
	sid = attr_u32(tb[L2TP_ATTR_SESSION_ID]);
	kt = ktunnel_find(tid);
	if (kt == NULL || kt->state != K_UP || kt->t == NULL || sid == 0 || sess_claimed(tid, sid))
		return;		/* not our tunnel, or not an orphan */
	if (orphan_delete(tid, sid)) {
		kdp.swept++;
		flush_soon();
	}
}

static void sweep_done(struct kreq *r, int err, const char *ext)
{
	(void)r;
	kdp.sweeping = false;
	kdp.stats_dumping = false;	/* the counters' socket is free again */
	if (err != 0)
		log_warnx("kernel: handover: listing kernel sessions for those nobody claimed: "
			  "%s%s%s", strerror(-err), ext ? ": " : "", ext ? ext : "");
	adoption_report();
}

/*
 * On the counters' socket, which runs one dump at a time: a counters dump
 * under way (a scrape in the first loop turn) is waited for.
 */
static void sweep_start(void)
{
	kdp.sweep_waiting = false;
	if (kdp.stats_dumping) {
		kdp.sweep_waiting = true;
		usl_timer_arm(l2tpd.timers, &kdp.adopt_timer, usl_time_ms(SWEEP_RETRY_MS));
		return;
	}
	if (kreq_submit_on(&kdp.dump, l2tp_msg(L2TP_CMD_SESSION_GET, NLM_F_DUMP), NULL,
			   sweep_done, sweep_data) == NULL) {
		log_warnx("kernel: handover: out of memory listing kernel sessions nobody claimed");
		return;
	}
	kdp.sweeping = kdp.stats_dumping = true;
	flush_soon();
}

/*
 * The adoption is over: what the daemon did not claim is deleted, as a
 * previous run's leftovers are - kept tunnels never adopted (dropped by
 * the daemon, or refused) now, and kernel sessions on adopted tunnels that
 * no session claims (a call the old process was still clearing) as the
 * sweep finds them.
 */
void on_adopt_timer(struct usl_timer *tm)
{
	unsigned tunnels = 0;
	struct usl_list walk;

	(void)tm;
	if (kdp.sweep_waiting) {
		sweep_start();
		return;
	}
	kept_tunnels(&walk);
	while (!usl_list_empty(&walk)) {
		struct ktunnel *kt = usl_list_first_entry(&walk, struct ktunnel, link);

		usl_list_del(&kt->link);
		tunnel_send_delete(kt);
		tunnels++;
	}
	log_info("kernel: handover: adopted %u tunnels and %u sessions; deleting %u tunnels "
		 "nobody claimed", kdp.adopted_tunnels, kdp.adopted_sessions, tunnels);
	flush_soon();
	sweep_start();
}

static uint8_t encap_type(const struct tunnel *t)
{
	return t->encap == L2TP_ENCAP_IP ? L2TP_ENCAPTYPE_IP : L2TP_ENCAPTYPE_UDP;
}

void kernel_tunnel_save(const struct tunnel *t, struct usl_pack *w)
{
	const struct ktunnel *kt = t->dp_priv;

	usl_pack_u8(w, kt != NULL && kt->state == K_UP ? KREC_VERSION : 0);
	usl_pack_u32(w, t->id);
	usl_pack_u32(w, l2tp_cc_peer_ccid(t->cc));
	usl_pack_u8(w, encap_type(t));
}

static int adopt_refuse(uint32_t id, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int adopt_refuse(uint32_t id, const char *what, const char *fmt, ...)
{
	char why[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_warnx("%s %u: not adopted: %s", what, id, why);
	return -1;
}

/* The kernel tunnel kept for it (K_KEPT), as the dump saw it, becomes this tunnel's. */
int kernel_tunnel_adopt(struct tunnel *t, struct usl_unpack *r)
{
	struct ktunnel *kt = ktunnel_find(t->id);
	uint8_t version = usl_unpack_u8(r);
	uint32_t id = usl_unpack_u32(r);
	uint32_t peer = usl_unpack_u32(r);
	uint8_t encap = usl_unpack_u8(r);

	if (r->bad || version != KREC_VERSION || id != t->id)
		return adopt_refuse(t->id, "tunnel", "malformed data plane record");
	if (t->dp_priv != NULL)
		return adopt_refuse(t->id, "tunnel", "adopted already");
	if (kt == NULL || kt->state != K_KEPT)
		return adopt_refuse(t->id, "tunnel", "no such kernel tunnel kept at start");
	if (peer != l2tp_cc_peer_ccid(t->cc) || kt->kpeer != peer)
		return adopt_refuse(t->id, "tunnel", "peer tunnel id %u, the kernel's %u, the "
				    "connection's %u", peer, kt->kpeer, l2tp_cc_peer_ccid(t->cc));
	if (encap != encap_type(t) || kt->kencap != encap)
		return adopt_refuse(t->id, "tunnel", "encapsulation %u, the kernel's %u", encap,
				    kt->kencap);
	kt->t = t;
	kt->state = K_UP;
	t->dp_priv = kt;
	kdp.adopted_tunnels++;
	return 0;
}

static void pack_cookie(struct usl_pack *w, const uint8_t *c, uint8_t len)
{
	usl_pack_u8(w, len);
	usl_pack_bytes(w, c, len);
}

static bool unpack_cookie(struct usl_unpack *r, uint8_t *c, uint8_t *len)
{
	*len = usl_unpack_u8(r);
	if (*len > 8)
		return false;
	usl_unpack_bytes(r, c, *len);
	return !r->bad;
}

/* A duration in ms within [0, max] (a late loop makes an age overshoot its bound). */
static uint64_t ms_clamp(usl_time d, int64_t max)
{
	int64_t ms = usl_time_to_ms(d);

	return (uint64_t)(ms < 0 ? 0 : ms > max ? max : ms);
}

void kernel_session_save(const struct session *s, struct usl_pack *w)
{
	const struct ksession *ks = s->dp_priv;
	const struct kprog *p;
	const struct name_ctr *c;
	usl_time t = now();
	bool watch;

	if (ks == NULL || ks->state != K_UP) {
		usl_pack_u8(w, 0);
		return;
	}
	p = &ks->prog;
	for (c = kdp.names; c != NULL && strcmp(c->pattern, ks->pattern) != 0; c = c->next)
		;
	watch = usl_timer_armed(&ks->cookie_timer);
	usl_pack_u8(w, KREC_VERSION);
	usl_pack_u32(w, ks->tid);
	usl_pack_u32(w, ks->sid);
	usl_pack_u16(w, ks->pw);
	usl_pack_u32(w, p->peer_sid);
	usl_pack_u8(w, p->l2spec);
	usl_pack_u8(w, p->recv_seq);
	usl_pack_u8(w, p->send_seq);
	pack_cookie(w, p->cookie, p->cookie_len);
	pack_cookie(w, p->peer_cookie, p->peer_cookie_len);
	usl_pack_str(w, ks->pattern);
	usl_pack_str(w, ks->kname);
	usl_pack_str(w, ks->ifname);
	usl_pack_u32(w, ks->kindex);
	usl_pack_u32(w, ks->ifindex);
	usl_pack_u32(w, ks->mtu);
	usl_pack_u32(w, c != NULL ? c->n : NO_COUNTER);
	usl_pack_u8(w, watch);
	usl_pack_u8(w, ks->cookie_warned);
	usl_pack_u32(w, ks->cookie_look_ms);
	usl_pack_u64(w, watch ? ms_clamp(usl_time_sub(t, ks->up_at), COOKIE_WATCH_MS) : 0);
	usl_pack_u64(w, watch ? ms_clamp(usl_time_sub(ks->cookie_timer.expiry, t),
					 COOKIE_LOOK_MAX_MS) : 0);
}

/* What the kernel accepts as a device name (dev_valid_name). */
static bool ifname_valid(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len >= IFNAMSIZ || strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] == '/' || n[i] == ':' || n[i] <= ' ' || n[i] == 0x7f)
			return false;
	return true;
}

/* The name of interface index, or "" (SIOCGIFNAME on a socket we hold: no socket per call). */
static void link_name(unsigned index, char name[IFNAMSIZ])
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_ifindex = (int)index;
	name[0] = '\0';
	if (index != 0 && ioctl(kdp.rtnl.fd, SIOCGIFNAME, &ifr) == 0)
		snprintf(name, IFNAMSIZ, "%.*s", IFNAMSIZ - 1, ifr.ifr_name);
}

/* A session's record, read whole; false (r->bad) when it is malformed. */
struct sess_rec {
	uint8_t version;
	uint32_t tid, sid;
	uint16_t pw;
	struct kprog prog;
	char pattern[CFG_NAME_MAX], kname[IFNAMSIZ], ifname[IFNAMSIZ];
	uint32_t kindex, ifindex, mtu, counter;
	bool watch, warned;
	uint32_t look_ms;
	uint64_t age_ms, due_ms;
};

static bool sess_rec_read(struct usl_unpack *r, struct sess_rec *x)
{
	memset(x, 0, sizeof(*x));
	x->version = usl_unpack_u8(r);
	if (x->version != KREC_VERSION)
		return false;
	x->tid = usl_unpack_u32(r);
	x->sid = usl_unpack_u32(r);
	x->pw = usl_unpack_u16(r);
	x->prog.peer_sid = usl_unpack_u32(r);
	x->prog.l2spec = usl_unpack_u8(r);
	x->prog.recv_seq = usl_unpack_bool(r);
	x->prog.send_seq = usl_unpack_bool(r);
	if (!unpack_cookie(r, x->prog.cookie, &x->prog.cookie_len) ||
	    !unpack_cookie(r, x->prog.peer_cookie, &x->prog.peer_cookie_len) ||
	    !usl_unpack_str_to(r, x->pattern, sizeof(x->pattern)) ||
	    !usl_unpack_str_to(r, x->kname, sizeof(x->kname)) ||
	    !usl_unpack_str_to(r, x->ifname, sizeof(x->ifname)))
		return false;
	x->kindex = usl_unpack_u32(r);
	x->ifindex = usl_unpack_u32(r);
	x->mtu = usl_unpack_u32(r);
	x->counter = usl_unpack_u32(r);
	x->watch = usl_unpack_bool(r);
	x->warned = usl_unpack_bool(r);
	x->look_ms = usl_unpack_u32(r);
	x->age_ms = usl_unpack_u64(r);
	x->due_ms = usl_unpack_u64(r);
	return !r->bad;
}

/* The record on its own: known values, names the kernel takes, consistent with each other. */
static const char *sess_rec_check(const struct sess_rec *x)
{
	size_t klen = strlen(x->kname);

	if (x->pw == L2TP_PW_PPP)
		return "PPP pseudowires are not handed over (their pppd is not)";
	if (x->pw != L2TP_PW_ETH && x->pw != L2TP_PW_ETH_VLAN)
		return "unknown pseudowire type";
	if (x->prog.l2spec != L2TP_L2SPECTYPE_NONE && x->prog.l2spec != L2TP_L2SPECTYPE_DEFAULT)
		return "unknown L2-Specific Sublayer";
	if (x->pattern[0] == '\0' || !ifname_valid(x->kname) || !ifname_valid(x->ifname))
		return "malformed interface name";
	if (x->pw == L2TP_PW_ETH && strcmp(x->kname, x->ifname) != 0)
		return "an Ethernet pseudowire's interface is not its kernel session's";
	if (x->pw == L2TP_PW_ETH_VLAN &&
	    (strncmp(x->ifname, x->kname, klen) != 0 || x->ifname[klen] != '.'))
		return "a VLAN pseudowire's interface is not on its kernel session's";
	if (x->kindex == 0 || x->kindex > INT_MAX || x->ifindex == 0 || x->ifindex > INT_MAX ||
	    (x->pw == L2TP_PW_ETH) != (x->kindex == x->ifindex))
		return "malformed interface index";
	if (x->mtu < 68 || x->mtu > 65535)
		return "MTU out of range";
	if (x->counter != NO_COUNTER && x->counter >= IFNAME_NUMBERS)
		return "interface name counter out of range";
	if (x->look_ms > COOKIE_LOOK_MAX_MS || x->age_ms > COOKIE_WATCH_MS ||
	    x->due_ms > COOKIE_LOOK_MAX_MS)
		return "cookie watch out of range";
	return NULL;
}

/* The record against the daemon's session and its interfaces as they are now. */
static const char *sess_rec_match(const struct session *s, const struct sess_rec *x)
{
	const struct ktunnel *kt = s->tunnel->dp_priv;
	struct kprog engine;
	char name[IFNAMSIZ];

	if (x->tid != s->tunnel->id || x->sid != s->id)
		return "the record is another session's";
	if (s->dp_priv != NULL)
		return "adopted already";
	if (kt == NULL || kt->state != K_UP)
		return "its tunnel was not adopted";
	if (x->pw != sess_pw(s))
		return "pseudowire type differs from the call's";
	session_prog(s, &engine);
	if (prog_identity_differs(&engine, &x->prog) || engine.recv_seq != x->prog.recv_seq ||
	    engine.send_seq != x->prog.send_seq)
		return "what was programmed differs from the call's";
	if (strcmp(s->ifname, x->ifname) != 0 || s->dp_handle != x->ifindex)
		return "interface differs from the session's";
	link_name(x->kindex, name);
	if (strcmp(name, x->kname) != 0)
		return "its interface index names another interface now";
	if (x->ifindex != x->kindex) {
		link_name(x->ifindex, name);
		if (strcmp(name, x->ifname) != 0)
			return "its VLAN interface index names another interface now";
	}
	return NULL;
}

static bool cookie_is(const struct nlattr *a, const uint8_t *c, uint8_t len)
{
	size_t n = a != NULL ? mnl_attr_get_payload_len(a) : 0;

	return n == len && (len == 0 || memcmp(mnl_attr_get_payload(a), c, len) == 0);
}

/* The kernel session against what the adopted session says it programmed. */
static const char *kernel_differs(const struct ksession *ks, const struct nlattr **tb)
{
	const struct nlattr *ifn = tb[L2TP_ATTR_IFNAME];

	if (attr_u16(tb[L2TP_ATTR_PW_TYPE]) != L2TP_PWTYPE_ETH ||
	    attr_u32(tb[L2TP_ATTR_PEER_SESSION_ID]) != ks->prog.peer_sid ||
	    attr_u8(tb[L2TP_ATTR_RECV_SEQ]) != ks->prog.recv_seq ||
	    attr_u8(tb[L2TP_ATTR_SEND_SEQ]) != ks->prog.send_seq ||
	    ifn == NULL || mnl_attr_validate(ifn, MNL_TYPE_NUL_STRING) < 0 ||
	    strcmp(mnl_attr_get_str(ifn), ks->kname) != 0)
		return "the kernel session differs from the record";
	/* the kernel's COOKIE is what it sends: the peer's (session_create_msg) */
	if (!cookie_is(tb[L2TP_ATTR_COOKIE], ks->prog.peer_cookie, ks->prog.peer_cookie_len) ||
	    !cookie_is(tb[L2TP_ATTR_PEER_COOKIE], ks->prog.cookie, ks->prog.cookie_len))
		return "the kernel session's cookies differ from the record";
	return NULL;
}

/* found: the kernel has the session as the record says */
static void adopt_check_data(struct kreq *r, const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[L2TP_ATTR_MAX + 1];
	const char *why;

	l2tp_attrs(nlh, tb);
	why = kernel_differs(r->obj, tb);
	r->found = why == NULL;
	if (why != NULL)
		log_warnx("session %u: %s", ((struct ksession *)r->obj)->sid, why);
}

/*
 * The lookup's answer: the kernel has no such session, or one that differs
 * from the record - the session is lost (a CDN), as if deleted by hand.
 */
static void adopt_check_done(struct kreq *r, int err, const char *ext)
{
	struct ksession *ks = r->obj;
	const char *why = NULL;

	kdp.adopt_checking--;
	if (gone(err))
		why = "no such kernel session";
	else if (err == 0 && !r->found)
		why = "the kernel session differs from the record";
	else if (err != 0)
		log_kernel_error("session", ks->sid, "SESSION_GET", err, ext);
	if (why != NULL && ks->s != NULL && ks->state == K_UP) {
		log_warnx("session %u: adopted, then lost: %s", ks->sid, why);
		kdp.adopt_lost++;
		session_dp_lost(ks->s, why);
	}
	ks_put(ks);
	adoption_report();
}

/* Asked once the session is adopted: the answer comes in the loop's first turns. */
static void adopt_check(struct ksession *ks)
{
	if (!session_get_as(ks, adopt_check_done, adopt_check_data)) {
		log_warnx("session %u: adopted without a look at its kernel session: out of memory",
			  ks->sid);
		return;
	}
	kdp.adopt_checking++;
}

/* A young session's cookie watch goes on where it was. */
static void cookie_watch_resume(struct ksession *ks, const struct sess_rec *x)
{
	ks->cookie_warned = x->warned;
	if (!x->watch || x->warned || ks->prog.cookie_len == 0)
		return;
	ks->up_at = usl_time_sub(now(), usl_time_ms((int64_t)x->age_ms));
	ks->cookie_look_ms = x->look_ms >= COOKIE_LOOK_MS ? x->look_ms : COOKIE_LOOK_MS;
	usl_timer_arm(l2tpd.timers, &ks->cookie_timer, usl_time_ms((int64_t)x->due_ms));
}

/*
 * The kernel session and its interfaces, checked, become this session's
 * again: struct ksession as the old process had it, its interfaces indexed
 * (link notices), counters to be read afresh.
 */
int kernel_session_adopt(struct session *s, struct usl_unpack *r)
{
	struct ksession *ks;
	struct sess_rec x;
	struct name_ctr *c;
	const char *why;

	if (!sess_rec_read(r, &x))
		return adopt_refuse(s->id, "session", "malformed data plane record");
	why = sess_rec_check(&x);
	if (why == NULL)
		why = sess_rec_match(s, &x);
	if (why != NULL)
		return adopt_refuse(s->id, "session", "%s", why);
	ks = calloc(1, sizeof(*ks));
	if (ks == NULL)
		return adopt_refuse(s->id, "session", "out of memory");
	if (x.counter != NO_COUNTER && (c = name_counter(x.pattern)) != NULL)
		c->n = x.counter;
	ks->s = s;
	ks->refs = 1;
	ks->tid = x.tid;
	ks->sid = x.sid;
	ks->state = K_UP;
	ks->pw = x.pw;
	ks->prog = x.prog;
	snprintf(ks->pattern, sizeof(ks->pattern), "%s", x.pattern);
	snprintf(ks->kname, sizeof(ks->kname), "%s", x.kname);
	snprintf(ks->ifname, sizeof(ks->ifname), "%s", x.ifname);
	ks->kindex = x.kindex;
	ks->ifindex = x.ifindex;
	ks->mtu = x.mtu;
	usl_timer_init(&ks->cookie_timer, on_cookie_timer);
	links_add(ks);
	cookie_watch_resume(ks, &x);
	s->dp_priv = ks;
	kdp.adopted_sessions++;
	adopt_check(ks);
	return 0;
}

/*
 * Nothing on its way to the kernel: no request queued or unanswered on
 * either socket, no send to retry, no adoption sweep to come.  A delete
 * notice being confirmed, or a verify after lost notices, is not waited
 * for (a flood of forged notices could hold a restart off for ever): the
 * next process lists the kernel's objects, and adopts only what is there.
 * The state file's buffered lines are written here, for the next process
 * to read.
 */
bool kernel_idle(void)
{
	if (chan_busy(&kdp.gnl) || chan_busy(&kdp.rtnl) || usl_timer_armed(&kdp.retry_timer) ||
	    usl_timer_armed(&kdp.adopt_timer))
		return false;
	if (kdp.rec.len > 0)
		rec_flush();
	return true;
}
