/*
 * src/dp_kernel_lost.c - kernel objects deleted behind the daemon's back:
 * what dp_watch.c hears is checked with the kernel before the engine is
 * told (an overview: dp_kernel.c).
 */
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>

#include <libmnl/libmnl.h>
#include <linux/l2tp.h>

#include "dp_kernel_int.h"
#include "dp_watch.h"

/* ---- objects deleted behind our back (dp_watch.c) ------------------------------- */

/* Our session (tid, sid) while its kernel object is up, or NULL. */
struct ksession *ksession_up(uint32_t tid, uint32_t sid)
{
	struct session *s = session_find(sid);
	struct ksession *ks = s ? s->dp_priv : NULL;

	return ks != NULL && ks->tid == tid && ks->state == K_UP ? ks : NULL;
}

static void session_lost(struct ksession *ks, const char *what)
{
	char why[96];

	snprintf(why, sizeof(why), "%s deleted outside l2tpv3d", what);
	session_dp_lost(ks->s, why);
}

/*
 * Its tunnel's delete notice is being confirmed (a tunnel deleted by hand
 * takes its sessions and their interfaces along): the session's loss waits
 * for that answer, so that the tunnel's loss is one StopCCN, not a CDN per
 * session first.  tunnel_confirm_done() checks the session again.
 */
static bool session_loss_held(struct ksession *ks)
{
	struct ktunnel *kt = ktunnel_find(ks->tid);

	if (kt == NULL || usl_list_empty(&kt->confirm))
		return false;
	kt->sess_notices = true;
	return true;
}

/* After any GET of the session: absent (the GET followed all our requests) means gone. */
void session_check_gone(struct ksession *ks, int err)
{
	char what[48];

	if (!gone(err) || ks->s == NULL || ks->state != K_UP || session_loss_held(ks))
		return;
	ks->state = K_GONE;
	snprintf(what, sizeof(what), "kernel session %u", ks->sid);
	session_lost(ks, what);
}

/*
 * A vanished interface: its kernel session may have gone first (then
 * that is the news), or it alone was deleted (then its session goes too).
 */
static void session_verify_done(struct kreq *r, int err, const char *ext)
{
	struct ksession *ks = r->obj;
	char what[IFNAMSIZ + 16];

	(void)ext;
	session_check_gone(ks, err);
	if (ks->link_lost[0] != '\0' && ks->s != NULL && ks->state == K_UP) {
		if (session_loss_held(ks)) {	/* link_lost kept for the next check */
			ks_put(ks);
			return;
		}
		snprintf(what, sizeof(what), "interface %s", ks->link_lost);
		session_lost(ks, what);	/* the engine deletes its kernel session */
	}
	ks->link_lost[0] = '\0';
	ks_put(ks);
}

static void session_verify(struct ksession *ks)
{
	session_get(ks, session_verify_done);
}

static void tunnel_lost(struct ktunnel *kt)
{
	char why[64];

	kt->state = K_GONE;
	snprintf(why, sizeof(why), "kernel tunnel %u deleted outside l2tpv3d", kt->id);
	tunnel_dp_lost(kt->t, why);
}

/* By id, not pointer: the tunnel may be let go and freed meanwhile. */
static void tunnel_verify_done(struct kreq *r, int err, const char *ext)
{
	struct ktunnel *kt = ktunnel_find((uint32_t)(uintptr_t)r->obj);

	(void)ext;
	if (gone(err) && kt != NULL && kt->state == K_UP && kt->t != NULL)
		tunnel_lost(kt);
}

static void tunnel_get(struct ktunnel *kt, void (*done)(struct kreq *, int, const char *))
{
	struct nlmsghdr *nlh = l2tp_msg(L2TP_CMD_TUNNEL_GET, NLM_F_ACK);

	mnl_attr_put_u32(nlh, L2TP_ATTR_CONN_ID, kt->id);
	kreq_submit(nlh, (void *)(uintptr_t)kt->id, done, probe_data);
}

static void tunnel_verify(struct ktunnel *kt)
{
	tunnel_get(kt, tunnel_verify_done);
}

/* A delete notice that the kernel contradicts came from another namespace. */
static struct log_ratelimit forged_rl = LOG_RATELIMIT_INIT(60, 5);

/* Its sessions' notices held while the tunnel's was checked: check them now. */
static void tunnel_sessions_verify(struct ktunnel *kt)
{
	struct usl_list *pos;

	kt->sess_notices = false;
	usl_list_foreach(pos, &kt->t->sessions) {
		struct ksession *ks = usl_list_entry(pos, struct session, tunnel_link)->dp_priv;

		if (ks != NULL && ks->state == K_UP)
			session_verify(ks);
	}
}

/*
 * Gone: the tunnel is lost, with its sessions (their own notices were held
 * so that a tunnel deleted by hand is one loss, one StopCCN).  Still there:
 * the notice came from another namespace.
 */
static void tunnel_confirm_done(struct kreq *r, int err, const char *ext)
{
	uint32_t id = (uint32_t)(uintptr_t)r->obj;
	struct ktunnel *kt;
	unsigned dropped;

	tunnel_verify_done(r, err, ext);
	kt = ktunnel_find(id);
	if (err != 0 || kt == NULL)
		return;
	if (kt->sess_notices && kt->state == K_UP && kt->t != NULL && usl_list_empty(&kt->confirm))
		tunnel_sessions_verify(kt);
	if (log_ratelimit_admit(&forged_rl, now(), &dropped))
		log_info("kernel: a delete notice for tunnel %u, which is still there: another "
			 "network namespace's tunnel with the same ids, ignored (%u more like it "
			 "not logged)", id, dropped);
}

static void tunnel_confirm(struct ktunnel *kt)
{
	tunnel_get(kt, tunnel_confirm_done);
}

/*
 * A tunnel's delete notice is never believed alone: the kernel multicasts
 * the l2tp family's notices of every network namespace to every listener,
 * unprivileged ones included, so anyone can read our two ids and delete a
 * look-alike tunnel in a namespace of their own.  The kernel deletes a
 * tunnel from a work queue, so a GET right after the notice may still find
 * it: ours is asked after CONFIRM_DELAY_MS.  A tunnel is queued once
 * however many notices name it, so a flood of forged notices costs at most
 * one GET per tunnel of ours per CONFIRM_DELAY_MS.
 */
static void watch_tunnel_gone(uint32_t tid, uint32_t peer_tid)
{
	struct ktunnel *kt = ktunnel_find(tid);

	if (kt == NULL || kt->state != K_UP || kt->t == NULL ||
	    l2tp_cc_peer_ccid(kt->t->cc) != peer_tid || !usl_list_empty(&kt->confirm))
		return;
	kt->confirm_at = usl_time_add(now(), usl_time_ms(CONFIRM_DELAY_MS));
	usl_list_add_tail(&kdp.confirm_q, &kt->confirm);
	if (!usl_timer_armed(&kdp.confirm_timer))
		usl_timer_arm_at(l2tpd.timers, &kdp.confirm_timer, kt->confirm_at);
}

/* The queue is in the order of the notices: ask for those whose delay is over. */
void on_confirm_timer(struct usl_timer *tm)
{
	usl_time t = now();

	while (!usl_list_empty(&kdp.confirm_q)) {
		struct ktunnel *kt = usl_list_first_entry(&kdp.confirm_q, struct ktunnel, confirm);

		if (usl_time_cmp(kt->confirm_at, t) > 0) {
			usl_timer_arm_at(l2tpd.timers, tm, kt->confirm_at);
			break;
		}
		usl_list_del(&kt->confirm);
		if (kt->state == K_UP && kt->t != NULL)
			tunnel_confirm(kt);
	}
	flush_soon();
}

/* Sessions are deleted at once: the GET settles it. */
static void watch_session_gone(uint32_t tid, uint32_t sid, uint32_t peer_sid)
{
	struct ksession *ks = ksession_up(tid, sid);

	if (ks != NULL && ks->s != NULL && l2tp_sess_remote_sid(ks->s->sess) == peer_sid)
		session_verify(ks);
}

/* Interface indexes are not reused soon: absent now means this one is gone. */
static void watch_link_gone(unsigned ifindex)
{
	struct ksession *ks = links_find(ifindex);
	char name[IF_NAMESIZE];

	if (ks == NULL || ks->s == NULL || ks->state != K_UP || if_indextoname(ifindex, name) != NULL)
		return;
	snprintf(ks->link_lost, sizeof(ks->link_lost), "%s",
		 ifindex == ks->kindex ? ks->kname : ks->ifname);
	links_del(ks);
	session_verify(ks);
}

/* Every object up: a GET each (l2tp notices lost), every interface looked up (link notices). */
static void verify_all(bool l2tp, bool link)
{
	struct usl_hnode *n;

	for (n = usl_hash_first(&l2tpd.sessions); n != NULL; n = usl_hash_next(&l2tpd.sessions, n)) {
		struct ksession *ks = usl_hash_entry(n, struct session, by_id)->dp_priv;
		char name[IF_NAMESIZE];

		if (ks == NULL || ks->state != K_UP)
			continue;
		if (l2tp)
			session_verify(ks);
		for (int i = 0; link && i < 2; i++) {
			unsigned idx = ks->links[i].ifindex;

			if (idx != 0 && if_indextoname(idx, name) == NULL) {
				watch_link_gone(idx);	/* queues a GET: nothing is freed here */
				break;
			}
		}
	}
	for (n = usl_hash_first(&kdp.tunnels); l2tp && n != NULL; n = usl_hash_next(&kdp.tunnels, n)) {
		struct ktunnel *kt = usl_hash_entry(n, struct ktunnel, by_id);

		if (kt->state == K_UP && kt->t != NULL)
			tunnel_verify(kt);
	}
	flush_soon();
}

void on_verify_timer(struct usl_timer *tm)
{
	(void)tm;
	verify_all(kdp.verify_l2tp, kdp.verify_link);
	kdp.verify_l2tp = kdp.verify_link = false;
}

/*
 * Notices were lost: check everything, once a second at most however often
 * the sockets overflow (another namespace's mass teardown reaches ours too),
 * and a second late: a tunnel just deleted may still answer a GET until the
 * kernel's work queue has run.
 */
static void watch_overrun(bool l2tp, bool link)
{
	kdp.verify_l2tp |= l2tp;
	kdp.verify_link |= link;
	if (!usl_timer_armed(&kdp.verify_timer))
		usl_timer_arm(l2tpd.timers, &kdp.verify_timer, usl_time_ms(VERIFY_DELAY_MS));
}

const struct dpw_ops watch_ops = {
	.tunnel_gone = watch_tunnel_gone,
	.session_gone = watch_session_gone,
	.link_gone = watch_link_gone,
	.overrun = watch_overrun,
};
