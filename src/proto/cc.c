/*
 * src/proto/cc.c - the control connection FSM (RFC 3931 3.3, 4.3, 4.4, 7.2).
 *
 * Input runs decode -> Message Digest check -> reliable delivery -> FSM;
 * the FSM is a switch on state then event (cc_fsm), every transition goes
 * through cc_change_state(), which logs one line and tells the daemon.
 * Longer actions live in cc_on_<event>() helpers.
 *
 * Re-entrancy: every entry point brackets its work with l2tp_cc_hold() /
 * l2tp_cc_release(); frees requested meanwhile (l2tp_cc_free, closed
 * sessions) happen when the outermost bracket closes.  After l2tp_cc_free()
 * no callback is made any more (cc->freed).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "usl/buf.h"
#include "usl/escape.h"
#include "usl/log.h"
#include "engine.h"

enum cc_event {
	CC_EV_OPEN,
	CC_EV_CLOSE,
	CC_EV_RX_SCCRQ,
	CC_EV_RX_SCCRP,
	CC_EV_RX_SCCCN,
	CC_EV_RX_STOPCCN,
	CC_EV_RX_HELLO,
	CC_EV_RX_SESSION,
	CC_EV_STOPCCN_ACKED,
	CC_EV_GIVE_UP,
	CC_EV_HOLD_EXPIRED,
	CC_EV_DP_UP,
	CC_EV_DP_FAILED,
	CC_EV_HELLO_DUE,
	CC_EV_SETUP_EXPIRED,
	CC_EV__COUNT
};

static const char *const cc_state_names[L2TP_CC_STATE__COUNT] = {
	[L2TP_CC_IDLE] = "idle",
	[L2TP_CC_WAIT_CTL_REPLY] = "wait-ctl-reply",
	[L2TP_CC_WAIT_CTL_CONN] = "wait-ctl-conn",
	[L2TP_CC_ESTABLISHED] = "established",
	[L2TP_CC_STOPPING] = "stopping",
	[L2TP_CC_CLOSED] = "closed",
};

static const char *const cc_event_names[CC_EV__COUNT] = {
	[CC_EV_OPEN] = "local open",
	[CC_EV_CLOSE] = "local close",
	[CC_EV_RX_SCCRQ] = "SCCRQ received",
	[CC_EV_RX_SCCRP] = "SCCRP received",
	[CC_EV_RX_SCCCN] = "SCCCN received",
	[CC_EV_RX_STOPCCN] = "StopCCN received",
	[CC_EV_RX_HELLO] = "HELLO received",
	[CC_EV_RX_SESSION] = "session message received",
	[CC_EV_STOPCCN_ACKED] = "StopCCN acknowledged",
	[CC_EV_GIVE_UP] = "retransmissions exhausted",
	[CC_EV_HOLD_EXPIRED] = "hold time over",
	[CC_EV_DP_UP] = "data plane tunnel up",
	[CC_EV_DP_FAILED] = "data plane tunnel failed",
	[CC_EV_HELLO_DUE] = "hello interval passed",
	[CC_EV_SETUP_EXPIRED] = "setup deadline passed",
};

static const char *const dp_state_names[] = {
	[L2TP_DP_NONE] = "none",
	[L2TP_DP_PENDING] = "pending",
	[L2TP_DP_UP] = "up",
	[L2TP_DP_FAILED] = "failed",
	[L2TP_DP_PREPARED] = "prepared",
};

static const char *const tie_names[] = {
	[L2TP_TIE_NONE] = "none",
	[L2TP_TIE_WE_WIN] = "we win",
	[L2TP_TIE_WE_LOSE] = "we lose",
	[L2TP_TIE_RESTART] = "restart",
};

const char *l2tp_cc_state_name(enum l2tp_cc_state s)
{
	return (unsigned)s < L2TP_CC_STATE__COUNT ? cc_state_names[s] : "unknown";
}

const char *l2tp_dp_state_name(enum l2tp_dp_state s)
{
	return (unsigned)s <= L2TP_DP_PREPARED ? dp_state_names[s] : "unknown";
}

const char *l2tp_tie_name(enum l2tp_tie t)
{
	return (unsigned)t <= L2TP_TIE_RESTART ? tie_names[t] : "unknown";
}

#define cc_log(lvl, cc, fmt, ...) \
	log_##lvl("tunnel %u/%u: " fmt, (cc)->local_ccid, (cc)->peer_ccid, ##__VA_ARGS__)

static enum l2tp_drop cc_fsm(struct l2tp_cc *cc, enum cc_event ev, const struct l2tp_msg *m);
static enum l2tp_drop cc_on_unknown_type(struct l2tp_cc *cc, const struct l2tp_msg *m);
static enum l2tp_drop cc_on_stopccn_reason(struct l2tp_cc *cc);
static enum l2tp_drop cc_deliver(struct l2tp_cc *cc, const struct l2tp_msg *m);
static void cc_closed(struct l2tp_cc *cc, const char *why);

/* ------------------------------------------------------------------ */
/* configuration, lifetime */

void l2tp_cc_cfg_init(struct l2tp_cc_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->encap = L2TP_ENCAP_UDP;
	cfg->rx_window = 16;
	cfg->rtx_initial = usl_time_s(1);
	cfg->rtx_cap = usl_time_s(8);
	cfg->max_retries = 10;
	cfg->sccrq_max_retries = 10;
	cfg->ack_delay = usl_time_ms(100);
	cfg->hello_interval = usl_time_s(60);
	cfg->hello_jitter_pct = 25;
	cfg->stop_hold = usl_time_s(31);
	cfg->pw_caps[0] = L2TP_PW_ETH;
	cfg->pw_caps[1] = L2TP_PW_ETH_VLAN;
	cfg->n_pw_caps = 2;
	cfg->digest_type = L2TP_DIGEST_HMAC_MD5;
	cfg->sess_setup_timeout = usl_time_s(60);
	cfg->setup_timeout = usl_time_s(60);
	cfg->sccrp_max_retries = 4;
}

static bool cc_cfg_valid(const struct l2tp_cc_cfg *cfg)
{
	if (cfg->host_name == NULL || cfg->host_name[0] == '\0' ||
	    strlen(cfg->host_name) > L2TP_AVP_MAX_LEN - L2TP_AVP_HDR_LEN)
		return false;
	if (cfg->rx_window == 0 || cfg->max_retries == 0 || cfg->n_pw_caps > L2TP_MAX_PW_CAPS)
		return false;
	if (cfg->rtx_initial.ns <= 0 || usl_time_cmp(cfg->rtx_cap, cfg->rtx_initial) < 0)
		return false;
	/*
	 * A hello interval is "never" or at most half the clock's range: the
	 * jitter adds up to 90 % of it (a restored state is checked here too,
	 * and a corrupt one once overflowed cc_jitter).
	 */
	if (cfg->hello_jitter_pct > 90 || cfg->hello_interval.ns < 0 ||
	    (!usl_time_is_never(cfg->hello_interval) && cfg->hello_interval.ns > INT64_MAX / 2))
		return false;
	if (cfg->auth_enabled && cfg->digest_type != L2TP_DIGEST_HMAC_MD5 &&
	    cfg->digest_type != L2TP_DIGEST_HMAC_SHA1)
		return false;
	return true;
}

static int cc_copy_cfg(struct l2tp_cc *cc, const struct l2tp_cc_cfg *cfg)
{
	cc->cfg = *cfg;
	cc->host_name = strdup(cfg->host_name);
	if (cc->host_name == NULL)
		return -1;
	cc->cfg.host_name = cc->host_name;
	if (cfg->vendor_name != NULL) {
		cc->vendor_name = strdup(cfg->vendor_name);
		if (cc->vendor_name == NULL)
			return -1;
		cc->cfg.vendor_name = cc->vendor_name;
	}
	cc->cfg.secret = NULL;
	if (cfg->secret_len > 0) {
		cc->secret = malloc(cfg->secret_len);
		if (cc->secret == NULL)
			return -1;
		memcpy(cc->secret, cfg->secret, cfg->secret_len);
		cc->cfg.secret = cc->secret;
	}
	if (cfg->sccrq_max_retries == 0)
		cc->cfg.sccrq_max_retries = cfg->max_retries;
	if (cfg->sccrp_max_retries == 0 || cfg->sccrp_max_retries > cfg->max_retries)
		cc->cfg.sccrp_max_retries = cfg->max_retries;
	return 0;
}

static void cc_rd_output(struct l2tp_rd *rd, uint8_t *buf, size_t len, uint16_t type,
			 bool retransmit);
static int cc_rd_build_ack(struct l2tp_rd *rd, uint8_t *buf, size_t cap);
static void cc_rd_acked(struct l2tp_rd *rd, uint16_t type);
static void cc_rd_give_up(struct l2tp_rd *rd, uint16_t type, unsigned retries);
static void cc_rd_guard(struct l2tp_rd *rd, bool enter);
static void cc_timer_expired(struct usl_timer *t);

static const struct l2tp_rd_ops cc_rd_ops = {
	.output = cc_rd_output,
	.build_ack = cc_rd_build_ack,
	.acked = cc_rd_acked,
	.give_up = cc_rd_give_up,
	.guard = cc_rd_guard,
};

static uint64_t cc_prng_next(struct l2tp_cc *cc)
{
	/* splitmix64: small, seedable, good enough for timer jitter */
	uint64_t z = (cc->prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void l2tp_cc_random(struct l2tp_cc *cc, void *buf, size_t len)
{
	if (cc->ops->random != NULL) {
		cc->ops->random(cc, buf, len);
		return;
	}
	if (l2tp_random(buf, len) < 0 && getrandom(buf, len, 0) != (ssize_t)len)
		fatalx("no randomness available");
}

/*
 * With authentication off a digest may still come as a mere integrity check
 * (4.3): empty secret, no nonces.  Those keys are the same for every
 * connection, so they are derived once and shared.
 */
static const struct l2tp_auth *cc_integrity_auth(void)
{
	static struct l2tp_auth integrity;
	static bool ready;
	static const uint8_t empty[1];

	if (!ready) {
		l2tp_auth_init(&integrity);
		if (l2tp_auth_add_key(&integrity, L2TP_DIGEST_HMAC_MD5, empty, 0) < 0 ||
		    l2tp_auth_add_key(&integrity, L2TP_DIGEST_HMAC_SHA1, empty, 0) < 0)
			return NULL;
		ready = true;
	}
	return &integrity;
}

static int cc_init_auth(struct l2tp_cc *cc)
{
	if (!cc->cfg.auth_enabled)
		return cc_integrity_auth() ? 0 : -1;
	cc->auth = malloc(sizeof(*cc->auth));
	if (cc->auth == NULL)
		return -1;
	l2tp_auth_init(cc->auth);
	return l2tp_auth_add_key(cc->auth, cc->cfg.digest_type, cc->cfg.secret,
				 cc->cfg.secret_len);
}

static void cc_init_rd(struct l2tp_cc *cc)
{
	struct l2tp_rd_cfg rc = {
		.rx_window = cc->cfg.rx_window,
		.rtx_initial = cc->cfg.rtx_initial,
		.rtx_cap = cc->cfg.rtx_cap,
		.max_retries = cc->cfg.max_retries,
		.ack_delay = cc->cfg.ack_delay,
	};

	l2tp_rd_init(&cc->rd, &rc, &cc_rd_ops, cc->timers);
	/* before the peer says, its window is 4: a smaller cap applies already */
	if (cc->cfg.tx_window_max != 0 && cc->cfg.tx_window_max < 4)
		l2tp_rd_set_peer_window(&cc->rd, cc->cfg.tx_window_max);
}

static void cc_destroy(struct l2tp_cc *cc)
{
	l2tp_rd_destroy(&cc->rd);
	usl_timer_cancel(&cc->timer);
	l2tp_sess_fini_cc(cc);
	free(cc->host_name);
	free(cc->vendor_name);
	if (cc->secret != NULL)
		explicit_bzero(cc->secret, cc->cfg.secret_len);
	free(cc->secret);
	if (cc->auth != NULL) {
		explicit_bzero(cc->auth, sizeof(*cc->auth));
		free(cc->auth);
	}
	free(cc->peer_host_name);
	free(cc->peer_vendor_name);
	l2tp_reason_free(&cc->reason);
	free(cc->st.drops);
	free(cc);
}

struct l2tp_cc *l2tp_cc_new(const struct l2tp_cc_cfg *cfg, const struct l2tp_cc_ops *ops,
			    struct usl_timerset *timers, uint32_t local_ccid, void *user)
{
	struct l2tp_cc *cc;

	if (cfg == NULL || ops == NULL || ops->send == NULL || timers == NULL ||
	    local_ccid == 0 || !cc_cfg_valid(cfg)) {
		errno = EINVAL;
		return NULL;
	}
	cc = calloc(1, sizeof(*cc));
	if (cc == NULL)
		return NULL;
	cc->ops = ops;
	cc->timers = timers;
	cc->user = user;
	cc->local_ccid = local_ccid;
	usl_timer_init(&cc->timer, cc_timer_expired);
	if (cc_copy_cfg(cc, cfg) < 0 || l2tp_sess_init_cc(cc) < 0)
		goto fail;
	cc_init_rd(cc);	/* after the copy: rd takes its timers from cc->cfg */
	if (cc_init_auth(cc) < 0) {
		errno = EINVAL;
		goto fail;
	}
	cc->prng = cfg->seed;
	if (cc->prng == 0)
		l2tp_cc_random(cc, &cc->prng, sizeof(cc->prng));
	cc->last_rx = usl_timerset_now(timers);
	return cc;
fail:
	cc_destroy(cc);
	return NULL;
}

void l2tp_cc_hold(struct l2tp_cc *cc)
{
	cc->depth++;
}

void l2tp_cc_release(struct l2tp_cc *cc)
{
	if (--cc->depth > 0)
		return;
	cc->depth++;		/* sess_freed callbacks must not re-enter the reap */
	l2tp_sess_reap(cc);
	cc->depth--;
	if (cc->freed)
		cc_destroy(cc);
}

static void cc_stop_timers(struct l2tp_cc *cc)
{
	l2tp_rd_stop_timers(&cc->rd);
	usl_timer_cancel(&cc->timer);
}

/* Deletes the data plane tunnel (or cancels its creation): once per create. */
static void cc_dp_delete(struct l2tp_cc *cc)
{
	/* a failed create owes nothing, and "failed" stays visible */
	if (cc->dp != L2TP_DP_PENDING && cc->dp != L2TP_DP_UP)
		return;
	cc->dp = L2TP_DP_NONE;
	if (cc->ops->dp_tunnel_delete != NULL)
		cc->ops->dp_tunnel_delete(cc);
}

void l2tp_cc_free(struct l2tp_cc *cc)
{
	if (cc == NULL || cc->freed)
		return;
	l2tp_cc_hold(cc);
	cc->freed = true;
	cc_stop_timers(cc);
	/* sessions and the tunnel leave the daemon's books now, memory later */
	l2tp_sess_cc_forget(cc);
	cc_dp_delete(cc);
	l2tp_cc_release(cc);
}

/* ------------------------------------------------------------------ */
/* reasons, state changes */

/*
 * Reasons are kept as allocated text: every connection and session has one,
 * most never go down with a message, and 10,000 inline buffers add up.
 */
static void reason_store(struct l2tp_reason *rs, char *text)
{
	static char empty[1];

	if (rs->text != empty)
		free(rs->text);
	rs->text = text ? text : empty;
	rs->r.message.p = (const uint8_t *)rs->text;
	rs->r.message.len = (uint16_t)strlen(rs->text);
}

void l2tp_reason_free(struct l2tp_reason *rs)
{
	reason_store(rs, NULL);
}

void l2tp_reason_set(struct l2tp_reason *rs, uint16_t result, uint16_t error,
		     bool has_error, const char *fmt, ...)
{
	char buf[L2TP_REASON_MAX] = "";
	va_list ap;

	rs->set = true;
	rs->r.result = result;
	rs->r.error = error;
	rs->r.has_error = has_error;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
	}
	reason_store(rs, strdup(buf));
}

/* Copies a received Result Code (its text lives in a buffer about to go). */
void l2tp_reason_from_msg(struct l2tp_reason *rs, const struct l2tp_result *r)
{
	char buf[L2TP_REASON_MAX];

	/* the peer's text is data: escaped (usl/escape.h), cut at a whole escape */
	usl_str_escape(buf, sizeof(buf), r->message.p, r->message.p ? r->message.len : 0);
	l2tp_reason_set(rs, r->result, r->error, r->has_error, "%s", buf);
}

/* Most connections never drop a message: their counters come on demand. */
static void cc_count_drop(struct l2tp_cc *cc, enum l2tp_drop why)
{
	if (cc->st.drops == NULL)
		cc->st.drops = calloc(L2TP_DROP__COUNT, sizeof(*cc->st.drops));
	if (cc->st.drops != NULL)
		cc->st.drops[why]++;
}

static void cc_change_state(struct l2tp_cc *cc, enum l2tp_cc_state to, const char *why)
{
	enum l2tp_cc_state from = cc->state;

	if (from == to)
		return;
	cc->state = to;
	if (cc->reason.set && to >= L2TP_CC_STOPPING)
		cc_log(debug, cc, "state change %s -> %s, reason: %s (result %u/%u%s%s)",
		       l2tp_cc_state_name(from), l2tp_cc_state_name(to), why,
		       cc->reason.r.result, cc->reason.r.error,
		       cc->reason.text && cc->reason.text[0] ? " " : "",
		       cc->reason.text ? cc->reason.text : "");
	else
		cc_log(debug, cc, "state change %s -> %s, reason: %s",
		       l2tp_cc_state_name(from), l2tp_cc_state_name(to), why);
	if (to == L2TP_CC_CLOSED)
		cc_stop_timers(cc);
	if (!cc->freed && cc->ops->cc_event != NULL)
		cc->ops->cc_event(cc, from, to,
				  to >= L2TP_CC_STOPPING && cc->reason.set ? &cc->reason.r : NULL);
}

static enum l2tp_drop cc_drop(struct l2tp_cc *cc, enum l2tp_drop why)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT(10, 20);

	if ((unsigned)why < L2TP_DROP__COUNT)
		cc_count_drop(cc, why);
	if (why != L2TP_DROP_DUPLICATE && log_get_level() >= LOG_LVL_DEBUG &&
	    log_ratelimit_ok(&rl, usl_timerset_now(cc->timers)))
		cc_log(debug, cc, "dropped a message: %s", l2tp_drop_name(why));
	return why;
}

/* ------------------------------------------------------------------ */
/* sending */

static bool cc_is_ack(uint16_t type)
{
	return type == L2TP_MSG_ZLB || type == L2TP_MSG_ACK;
}

static unsigned cc_max_retries(const struct l2tp_cc *cc, uint16_t type)
{
	if (type == L2TP_MSG_SCCRQ)
		return cc->cfg.sccrq_max_retries;
	if (type == L2TP_MSG_SCCRP)
		return cc->cfg.sccrp_max_retries;
	return cc->cfg.max_retries;
}

/* 5.3: what an operator may consider secret goes hidden when asked. */
#define CC_HIDE_MASK2	((1ull << (L2TP_AVP_ASSIGNED_COOKIE - 64)) | \
			 (1ull << (L2TP_AVP_REMOTE_END_ID - 64)))

static bool cc_wants_hiding(const struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	return cc->cfg.hide_avps && cc->cfg.secret_len > 0 &&
	       (l2tp_msg_has(m, L2TP_AVP_ASSIGNED_COOKIE) ||
		l2tp_msg_has(m, L2TP_AVP_REMOTE_END_ID));
}

static void cc_msg_init(struct l2tp_msg *m, uint16_t type);

/*
 * How long, from now, what cc has in flight takes to be given up on once its
 * budget is cut to `retries` (l2tp_rd_limit_retries): at once when the
 * oldest was sent again more often already, at the armed timer when exactly
 * that often, else that timer and the remaining timeouts, each doubling.
 */
static usl_time cc_inflight_give_up_in(const struct l2tp_cc *cc, unsigned retries)
{
	const struct l2tp_rd *rd = &cc->rd;
	const struct l2tp_rd_buf *oldest;
	usl_time now = usl_timerset_now(cc->timers), left = usl_time_ns(0);

	if (rd->n_inflight == 0)
		return l2tp_rd_give_up_after(rd, retries);
	oldest = usl_list_first_entry(&rd->inflight, struct l2tp_rd_buf, link);
	if (oldest->retries > retries)
		return left;
	if (usl_timer_armed(&rd->rtx_timer) && usl_time_cmp(rd->rtx_timer.expiry, now) > 0)
		left = usl_time_sub(rd->rtx_timer.expiry, now);
	if (oldest->retries == retries)
		return left;
	/* the armed timer is the first of the remaining timeouts (rd->rto) */
	return usl_time_add(left, usl_time_sub(l2tp_rd_give_up_after(rd, retries - oldest->retries),
					       rd->rto));
}

/*
 * A HELLO on the connection's own budget, to find out whether a silent
 * connection is still there: *answer_by is how long `retries` of its
 * retransmissions (one RTO each, doubling) take to go unanswered.  Only the
 * caller's verdict cuts that budget (l2tp_cc_probe_cut), so a live peer's
 * connection is not cleared for two lost datagrams.  A connection with
 * messages in flight is probed by them already: a HELLO would only queue
 * behind them, and they would keep their whole budget, their retransmissions
 * reaching a restarted peer for a minute or more.  Their budget is cut to
 * `retries` at once (an unanswered retransmission is what the HELLO would
 * wait for) and *answer_by says when they are given up on.
 */
int l2tp_cc_probe(struct l2tp_cc *cc, unsigned retries, usl_time *answer_by)
{
	struct l2tp_msg m;

	if (cc->state != L2TP_CC_ESTABLISHED) {
		errno = EBUSY;
		return -1;
	}
	if (!l2tp_rd_idle(&cc->rd)) {
		if (answer_by != NULL)
			*answer_by = cc_inflight_give_up_in(cc, retries);
		l2tp_rd_limit_retries(&cc->rd, retries);
		return 1;
	}
	cc_msg_init(&m, L2TP_MSG_HELLO);
	if (l2tp_cc_send_msg(cc, &m) < 0)
		return -1;
	if (answer_by != NULL)
		*answer_by = l2tp_rd_give_up_after(&cc->rd, retries);
	return 0;
}

void l2tp_cc_probe_cut(struct l2tp_cc *cc, unsigned retries)
{
	if (cc->state == L2TP_CC_ESTABLISHED)
		l2tp_rd_limit_retries(&cc->rd, retries);
}

usl_time l2tp_cc_last_rx(const struct l2tp_cc *cc)
{
	return cc->last_rx;
}

int l2tp_cc_send_msg(struct l2tp_cc *cc, struct l2tp_msg *m)
{
	uint8_t buf[L2TP_MAX_MSG], rv[16];
	struct l2tp_secret sec = { cc->cfg.secret, cc->cfg.secret_len };
	uint64_t hide2 = 0;
	int len;

	if (cc->freed)
		return -1;
	if (cc->fo == L2TP_FO_RESYNC) {
		errno = EAGAIN;	/* RFC 4951: silent until the control channel reset */
		return -1;
	}
	m->ver = 3;
	m->ccid = cc->peer_ccid;
	m->ns = m->nr = 0;
	m->n_digests = 0;
	if (cc->cfg.auth_enabled)
		l2tp_auth_prepare(cc->auth, m);
	if (cc_wants_hiding(cc, m)) {
		/* a fresh Random Vector per message, before the hidden AVPs */
		l2tp_cc_random(cc, rv, sizeof(rv));
		m->random_vector.p = rv;
		m->random_vector.len = sizeof(rv);
		l2tp_msg_set(m, L2TP_AVP_RANDOM_VECTOR);
		hide2 = CC_HIDE_MASK2;
	}
	len = l2tp_msg_encode2(m, buf, sizeof(buf), false, 0, hide2, hide2 ? &sec : NULL);
	if (len < 0) {
		cc_log(warnx, cc, "cannot encode %s", l2tp_msg_type_name(m->type));
		return -1;
	}
	if (l2tp_rd_send(&cc->rd, buf, (size_t)len, m->type, cc_max_retries(cc, m->type)) < 0) {
		cc_log(warn, cc, "cannot queue %s", l2tp_msg_type_name(m->type));
		return -1;
	}
	return 0;
}

static void cc_rd_output(struct l2tp_rd *rd, uint8_t *buf, size_t len, uint16_t type,
			 bool retransmit)
{
	struct l2tp_cc *cc = usl_container_of(rd, struct l2tp_cc, rd);

	if (cc->freed)
		return;
	if (cc->cfg.auth_enabled && len > L2TP_CTRL_HDR_LEN &&
	    l2tp_auth_sign(cc->auth, buf, len, false) < 0) {
		cc_log(warnx, cc, "cannot sign %s", l2tp_msg_type_name(type));
		return;
	}
	if (retransmit)
		cc->st.retransmits++;
	else if (len == L2TP_CTRL_HDR_LEN)
		cc->st.tx_msgs[L2TP_MSG_ZLB]++;
	else if (type == 0)
		cc->st.tx_msgs[L2TP_MSG_ACK]++;
	else if (type <= L2TP_MSG_TYPE_MAX)
		cc->st.tx_msgs[type]++;
	cc->ops->send(cc, buf, len);
}

/* A ZLB, or an ACK (20) when configured or required (authentication: 6.15). */
static int cc_rd_build_ack(struct l2tp_rd *rd, uint8_t *buf, size_t cap)
{
	struct l2tp_cc *cc = usl_container_of(rd, struct l2tp_cc, rd);
	struct l2tp_msg m;

	if (!cc->cfg.auth_enabled && !cc->cfg.explicit_ack) {
		if (cap < L2TP_CTRL_HDR_LEN)
			return -1;
		memset(buf, 0, L2TP_CTRL_HDR_LEN);
		usl_put_be16(buf, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | 3);
		usl_put_be16(buf + 2, L2TP_CTRL_HDR_LEN);
		usl_put_be32(buf + 4, cc->peer_ccid);
		return L2TP_CTRL_HDR_LEN;
	}
	l2tp_msg_clear(&m);
	m.ver = 3;
	m.type = L2TP_MSG_ACK;
	m.ccid = cc->peer_ccid;
	if (cc->cfg.auth_enabled)
		l2tp_auth_prepare(cc->auth, &m);
	return l2tp_msg_encode(&m, buf, cap, false, 0, NULL);
}

static void cc_rd_acked(struct l2tp_rd *rd, uint16_t type)
{
	struct l2tp_cc *cc = usl_container_of(rd, struct l2tp_cc, rd);

	if (type == L2TP_MSG_STOPCCN)
		cc_fsm(cc, CC_EV_STOPCCN_ACKED, NULL);
	else if (type == L2TP_MSG_SCCCN && cc->cfg.recover_ccid != 0 && cc->recovery_reset &&
		 cc->state == L2TP_CC_ESTABLISHED && cc->ops->recovery != NULL)
		cc->ops->recovery(cc, L2TP_RECOVERY_DONE);
}

static void cc_rd_give_up(struct l2tp_rd *rd, uint16_t type, unsigned retries)
{
	struct l2tp_cc *cc = usl_container_of(rd, struct l2tp_cc, rd);

	if (cc->state == L2TP_CC_STOPPING)
		;	/* keep the reason we are stopping for */
	else if (type == L2TP_MSG_SCCRQ)
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_FSM_ERROR, 0, false,
				"no answer to SCCRQ after %u retransmissions", retries);
	else
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_FSM_ERROR, 0, false,
				"peer not responding after %u retransmissions (%s)",
				retries, l2tp_msg_type_name(type));
	cc_fsm(cc, CC_EV_GIVE_UP, NULL);
}

static void cc_rd_guard(struct l2tp_rd *rd, bool enter)
{
	struct l2tp_cc *cc = usl_container_of(rd, struct l2tp_cc, rd);

	if (enter)
		l2tp_cc_hold(cc);
	else
		l2tp_cc_release(cc);
}

static void cc_msg_init(struct l2tp_msg *m, uint16_t type)
{
	l2tp_msg_clear(m);
	m->type = type;
	l2tp_msg_set(m, L2TP_AVP_MESSAGE_TYPE);
}

static void cc_bytes(struct l2tp_bytes *b, const void *p, size_t len)
{
	b->p = p;
	b->len = (uint16_t)len;
}

/*
 * RFC 4951: a recovery connection's SCCRQ names the old connection, its
 * SCCRP suggests the old connection's sequence numbers, and neither
 * carries the Failover Capability; other connections advertise it when
 * configured.
 */
static void cc_put_failover(const struct l2tp_cc *cc, struct l2tp_msg *m)
{
	if (m->type == L2TP_MSG_SCCRQ && cc->cfg.recover_ccid != 0) {
		m->recover_ccid = cc->cfg.recover_ccid;
		m->recover_peer_ccid = cc->cfg.recover_peer_ccid;
		l2tp_msg_set(m, L2TP_AVP_TUNNEL_RECOVERY);
	} else if (m->type == L2TP_MSG_SCCRP && cc->recovery_of != 0) {
		m->suggested_ns = cc->scs_ns;
		m->suggested_nr = cc->scs_nr;
		l2tp_msg_set(m, L2TP_AVP_SUGGESTED_CTRL_SEQ);
	} else if (cc->cfg.failover) {
		m->failover_flags = L2TP_FAILOVER_C | L2TP_FAILOVER_D;
		m->recovery_time_ms = cc->cfg.recovery_time_ms;
		l2tp_msg_set(m, L2TP_AVP_FAILOVER_CAP);
	}
}

/* SCCRQ and SCCRP share everything but the tie breaker. */
static int cc_send_sccrx(struct l2tp_cc *cc, uint16_t type)
{
	struct l2tp_msg m;
	unsigned i;

	cc_msg_init(&m, type);
	cc_bytes(&m.host_name, cc->cfg.host_name, strlen(cc->cfg.host_name));
	l2tp_msg_set(&m, L2TP_AVP_HOST_NAME);
	m.router_id = cc->cfg.router_id;
	l2tp_msg_set(&m, L2TP_AVP_ROUTER_ID);
	m.assigned_ccid = cc->local_ccid;
	l2tp_msg_set(&m, L2TP_AVP_ASSIGNED_CCID);
	for (i = 0; i < cc->cfg.n_pw_caps; i++)
		m.pw_caps[i] = cc->cfg.pw_caps[i];
	m.n_pw_caps = cc->cfg.n_pw_caps;
	l2tp_msg_set(&m, L2TP_AVP_PW_CAP_LIST);
	m.recv_window = cc->cfg.rx_window;
	l2tp_msg_set(&m, L2TP_AVP_RECV_WINDOW_SIZE);
	if (cc->cfg.vendor_name != NULL) {
		cc_bytes(&m.vendor_name, cc->cfg.vendor_name, strlen(cc->cfg.vendor_name));
		l2tp_msg_set(&m, L2TP_AVP_VENDOR_NAME);
	}
	if (cc->cfg.auth_enabled) {
		cc_bytes(&m.nonce, cc->auth->local_nonce, cc->auth->local_nonce_len);
		l2tp_msg_set(&m, L2TP_AVP_CTRL_MSG_AUTH_NONCE);
	}
	if (type == L2TP_MSG_SCCRQ && cc->sent_tie_breaker) {
		m.tie_breaker = cc->tie_breaker;
		l2tp_msg_set(&m, L2TP_AVP_TIE_BREAKER);
	}
	cc_put_failover(cc, &m);
	cc->sent_sccrx = true;
	return l2tp_cc_send_msg(cc, &m);
}

static int cc_send_simple(struct l2tp_cc *cc, uint16_t type)
{
	struct l2tp_msg m;

	cc_msg_init(&m, type);
	return l2tp_cc_send_msg(cc, &m);
}

static int cc_send_stopccn(struct l2tp_cc *cc)
{
	struct l2tp_msg m;

	cc_msg_init(&m, L2TP_MSG_STOPCCN);
	m.result = cc->reason.r;
	l2tp_msg_set(&m, L2TP_AVP_RESULT_CODE);
	/* 6.4: MUST when we had sent an SCCRQ or SCCRP */
	if (cc->sent_sccrx) {
		m.assigned_ccid = cc->local_ccid;
		l2tp_msg_set(&m, L2TP_AVP_ASSIGNED_CCID);
	}
	return l2tp_cc_send_msg(cc, &m);
}

/* ------------------------------------------------------------------ */
/* timers */

static usl_time cc_jitter(struct l2tp_cc *cc, usl_time ival)
{
	unsigned pct = cc->cfg.hello_jitter_pct;
	int64_t span, off;

	if (pct == 0 || usl_time_is_never(ival))
		return ival;
	span = ival.ns / 100 * pct;
	off = (int64_t)(cc_prng_next(cc) % (uint64_t)(2 * span + 1)) - span;
	return usl_time_ns(ival.ns + off);
}

/* Every state before established ends by a deadline, acknowledged or not. */
static void cc_setup_arm(struct l2tp_cc *cc)
{
	if (!usl_time_is_never(cc->cfg.setup_timeout) && cc->cfg.setup_timeout.ns > 0)
		usl_timer_arm(cc->timers, &cc->timer, cc->cfg.setup_timeout);
}

static void cc_hello_arm(struct l2tp_cc *cc)
{
	if (usl_time_is_never(cc->cfg.hello_interval) || cc->cfg.hello_interval.ns <= 0)
		return;
	cc->hello_ival = cc_jitter(cc, cc->cfg.hello_interval);
	usl_timer_arm_at(cc->timers, &cc->timer, usl_time_add(cc->last_rx, cc->hello_ival));
}

/*
 * The deadline slides with every received message without re-arming the
 * timer per message: on expiry we look at last_rx and re-arm if it moved.
 */
static void cc_hello_expired(struct l2tp_cc *cc)
{
	usl_time due = usl_time_add(cc->last_rx, cc->hello_ival);

	if (usl_time_cmp(due, usl_timerset_now(cc->timers)) > 0) {
		usl_timer_arm_at(cc->timers, &cc->timer, due);
		return;
	}
	cc_fsm(cc, CC_EV_HELLO_DUE, NULL);
}

/*
 * A failover that did not happen in time: the peer never came back for its
 * connection (awaiting-peer), or ours could not be recovered (resync).
 * Either way the peer is not listening: no StopCCN, no CDN.
 */
static void cc_failover_expired(struct l2tp_cc *cc)
{
	if (cc->fo == L2TP_FO_RESYNC)
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR, 0, false,
				"not recovered after a restart (RFC 4951)");
	else
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_FSM_ERROR, 0, false,
				"peer not responding, and it did not recover within %u ms",
				cc->peer_recovery_ms);
	cc_closed(cc, "failover deadline passed");
}

/*
 * One timer serves the setup deadline (wait-ctl-*), the keepalive
 * (established) and the StopCCN hold (stopping): they never run at once,
 * and 10,000 connections save two timers each.
 */
static void cc_timer_expired(struct usl_timer *t)
{
	struct l2tp_cc *cc = usl_container_of(t, struct l2tp_cc, timer);

	l2tp_cc_hold(cc);
	if (cc->state == L2TP_CC_STOPPING)
		cc_fsm(cc, CC_EV_HOLD_EXPIRED, NULL);
	else if (cc->state == L2TP_CC_ESTABLISHED && cc->fo != L2TP_FO_NONE)
		cc_failover_expired(cc);
	else if (cc->state == L2TP_CC_WAIT_CTL_REPLY || cc->state == L2TP_CC_WAIT_CTL_CONN)
		cc_fsm(cc, CC_EV_SETUP_EXPIRED, NULL);
	else
		cc_hello_expired(cc);
	l2tp_cc_release(cc);
}

void l2tp_cc_note_rx(struct l2tp_cc *cc)
{
	cc->last_rx = usl_timerset_now(cc->timers);
}

/* ------------------------------------------------------------------ */
/* data plane */

static void cc_dp_result(struct l2tp_cc *cc, int err)
{
	if (err != 0) {
		cc->dp = L2TP_DP_FAILED;
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES,
				true, "data plane tunnel: %s", strerror(err < 0 ? -err : err));
		cc_fsm(cc, CC_EV_DP_FAILED, NULL);
	} else {
		cc->dp = L2TP_DP_UP;
		cc_fsm(cc, CC_EV_DP_UP, NULL);
	}
}

static void cc_dp_create(struct l2tp_cc *cc)
{
	int rc;

	if (cc->ops->dp_tunnel_create == NULL) {
		cc->dp = L2TP_DP_UP;
		return;
	}
	cc->dp = L2TP_DP_PENDING;
	cc->dp_in_call = true;
	cc->dp_stashed = false;
	rc = cc->ops->dp_tunnel_create(cc);
	cc->dp_in_call = false;
	if (cc->freed || cc->dp != L2TP_DP_PENDING)
		return;
	if (rc != 0) {
		cc_dp_result(cc, rc);	/* never started: no delete owed */
	} else if (cc->dp_stashed) {
		cc_dp_result(cc, cc->dp_stashed_err);
	}
}

void l2tp_cc_dp_done(struct l2tp_cc *cc, int err)
{
	if (cc == NULL || cc->freed || cc->dp != L2TP_DP_PENDING)
		return;
	if (cc->dp_in_call) {
		cc->dp_stashed = true;
		cc->dp_stashed_err = err;
		return;
	}
	l2tp_cc_hold(cc);
	cc_dp_result(cc, err);
	l2tp_cc_release(cc);
}

/* ------------------------------------------------------------------ */
/* FSM actions */

/* Sessions and the data plane go; the reliable layer stays for the hold. */
static void cc_teardown(struct l2tp_cc *cc)
{
	usl_timer_cancel(&cc->timer);
	l2tp_sess_cc_down(cc, &cc->reason);
	cc_dp_delete(cc);
}

static void cc_closed(struct l2tp_cc *cc, const char *why)
{
	cc_teardown(cc);
	l2tp_rd_quiesce(&cc->rd);
	cc_change_state(cc, L2TP_CC_CLOSED, why);
}

/*
 * Whether a StopCCN of ours can reach a peer that keeps state for us.  With
 * the peer's CCID known, yes.  Before its SCCRP, RFC 3931 5.4.3 sends it
 * with CCID 0 and our Assigned CCID, for the peer's reverse lookup; we do
 * so only once the peer acknowledged our SCCRQ: it holds a half connection
 * then, and its acknowledgement, addressed to our CCID, shows it saw the
 * SCCRQ.  A peer that never answered may be a forged source: nothing is
 * reflected to it.
 */
static bool cc_peer_holds_state(const struct l2tp_cc *cc)
{
	if (cc->peer_ccid != 0)
		return true;
	return cc->state == L2TP_CC_WAIT_CTL_REPLY && cc->sent_sccrx && cc->rd.snd_una != 0;
}

/*
 * Sends StopCCN with cc->reason and holds (RFC 3931 4.2: until it is
 * acknowledged or one retransmission cycle has passed).  When no peer
 * holds state for us (cc_peer_holds_state), close at once.
 */
static void cc_stop(struct l2tp_cc *cc, const char *why)
{
	if (!cc_peer_holds_state(cc)) {
		cc_closed(cc, why);
		return;
	}
	cc_change_state(cc, L2TP_CC_STOPPING, why);
	if (cc->state != L2TP_CC_STOPPING)
		return;
	cc_teardown(cc);
	l2tp_rd_drop_pending(&cc->rd);
	usl_timer_arm(cc->timers, &cc->timer, cc->cfg.stop_hold);
	if (cc_send_stopccn(cc) < 0)
		cc_closed(cc, "cannot send StopCCN");
}

/* Stops with a locally made result. */
static void cc_stopf(struct l2tp_cc *cc, const char *why, uint16_t result, uint16_t error,
		     const char *text)
{
	l2tp_reason_set(&cc->reason, result, error, result == L2TP_STOPCCN_GENERAL_ERROR,
			"%s", text);
	cc_stop(cc, why);
}

/* 7.1: a message that is valid but not acceptable in this state. */
static enum l2tp_drop cc_fsm_error(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	char text[64];

	snprintf(text, sizeof(text), "%s in state %s", l2tp_msg_type_name(m->type),
		 l2tp_cc_state_name(cc->state));
	cc_stopf(cc, "unexpected message", L2TP_STOPCCN_FSM_ERROR, 0, text);
	return L2TP_DROP_WRONG_STATE;
}

/*
 * A printable copy of a peer-supplied name (NULL on ENOMEM: shown as ""),
 * escaped once here (usl/escape.h) so that logs, JSON, hooks and SNMP all
 * show the same valid UTF-8 text.
 */
static char *cc_copy_name(char *old, const struct l2tp_bytes *b)
{
	size_t n = b->len < L2TP_NAME_MAX ? b->len : L2TP_NAME_MAX;

	free(old);
	return usl_str_escape_dup(b->p, n);
}


/*
 * Our send window: the peer's Receive Window Size (4 when it gave none, 4.2),
 * capped at the operator's tx_window_max for peers that advertise more than
 * they take.
 */
static uint16_t cc_tx_window(const struct l2tp_cc *cc)
{
	uint16_t w = cc->peer_rx_window ? cc->peer_rx_window : 4;

	if (cc->cfg.tx_window_max != 0 && w > cc->cfg.tx_window_max)
		w = cc->cfg.tx_window_max;
	return w;
}
/* What an SCCRQ or SCCRP tells us about the peer. */
static void cc_learn_peer(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	unsigned i;

	cc->peer_ccid = m->assigned_ccid;
	cc->peer_router_id = m->router_id;
	cc->peer_host_name = cc_copy_name(cc->peer_host_name, &m->host_name);
	if (l2tp_msg_has(m, L2TP_AVP_VENDOR_NAME))
		cc->peer_vendor_name = cc_copy_name(cc->peer_vendor_name, &m->vendor_name);
	cc->n_peer_pw_caps = m->n_pw_caps;
	for (i = 0; i < m->n_pw_caps && i < L2TP_MAX_PW_CAPS; i++)
		cc->peer_pw_caps[i] = m->pw_caps[i];
	cc->peer_rx_window = l2tp_msg_has(m, L2TP_AVP_RECV_WINDOW_SIZE) ? m->recv_window : 0;
	l2tp_rd_set_peer_window(&cc->rd, cc_tx_window(cc));
	if (l2tp_msg_has(m, L2TP_AVP_FAILOVER_CAP)) {
		cc->peer_fo_flags = m->failover_flags;
		/* a deadline of its choosing, within reason */
		cc->peer_recovery_ms = m->recovery_time_ms < L2TP_RECOVERY_MAX_MS ?
				       m->recovery_time_ms : L2TP_RECOVERY_MAX_MS;
	}
}

/*
 * What an SCCRQ/SCCRP must satisfy beyond decoding: no unknown mandatory
 * AVP (5.2), a usable Assigned CCID, authentication agreement (4.3: both
 * or neither) and a non-empty nonce.  NULL when acceptable, else a short
 * why, with the StopCCN result in *r and its text in text.
 */
static const char *sccrx_problem(bool auth_enabled, const struct l2tp_msg *m,
				 struct l2tp_result *r, char *text, size_t textlen)
{
	bool nonce = l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE);

	memset(r, 0, sizeof(*r));
	r->result = L2TP_STOPCCN_GENERAL_ERROR;
	r->has_error = true;
	if (m->has_unknown_mandatory) {
		r->error = L2TP_ERR_UNKNOWN_MANDATORY_AVP;
		snprintf(text, textlen, "unknown mandatory AVP %u (vendor %u)",
			 m->unknown_mandatory_type, m->unknown_mandatory_vendor);
		return "unknown mandatory AVP";
	}
	if (m->assigned_ccid == 0) {
		r->error = L2TP_ERR_BAD_VALUE;
		snprintf(text, textlen, "Assigned Control Connection ID 0");
		return "bad Assigned CCID";
	}
	if (nonce && (m->nonce.len == 0 || m->nonce.len > L2TP_NONCE_MAX)) {
		r->error = L2TP_ERR_BAD_LENGTH;
		snprintf(text, textlen, "nonce of %u octets", m->nonce.len);
		return "bad nonce";
	}
	r->result = L2TP_STOPCCN_NOT_AUTHORIZED;
	r->has_error = false;
	if (auth_enabled && !nonce) {
		snprintf(text, textlen, "authentication required, peer sent no nonce");
		return "peer does not authenticate";
	}
	if (!auth_enabled && nonce) {
		snprintf(text, textlen, "peer requires authentication, no secret configured");
		return "peer requires authentication";
	}
	return NULL;
}

/* sccrx_problem() for a connection: the reason is kept, the nonce stored. */
static const char *cc_check_sccrx(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	struct l2tp_result r;
	char text[L2TP_REASON_MAX];
	const char *bad = sccrx_problem(cc->cfg.auth_enabled, m, &r, text, sizeof(text));

	if (bad != NULL) {
		l2tp_reason_set(&cc->reason, r.result, r.error, r.has_error, "%s", text);
		return bad;
	}
	if (l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE) &&
	    l2tp_auth_set_peer_nonce(cc->auth, &m->nonce) < 0) {
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_BAD_LENGTH, true,
				"nonce too long");
		return "bad nonce";
	}
	return NULL;
}

static bool cc_is_recovery(const struct l2tp_cc *cc)
{
	return cc->cfg.recover_ccid != 0 || cc->recovery_of != 0;
}

/*
 * A recovery connection is up: the initiator has the SCCRP's suggestion,
 * the responder the SCCCN.  The responder's peer has reset already (at the
 * SCCRP): it is done at once, acknowledging the SCCCN now so that the
 * initiator's DONE follows within a round trip.
 */
static void cc_recovery_reset(struct l2tp_cc *cc)
{
	if (cc->ops->recovery == NULL)
		return;
	cc->recovery_reset = true;
	cc->ops->recovery(cc, L2TP_RECOVERY_RESET);
	if (cc->freed || cc->state != L2TP_CC_ESTABLISHED || cc->recovery_of == 0)
		return;
	l2tp_rd_ack_now(&cc->rd);
	cc->ops->recovery(cc, L2TP_RECOVERY_DONE);
}

/* Established: keepalive, the data plane tunnel, then waiting sessions. */
static void cc_on_established(struct l2tp_cc *cc, const char *why)
{
	usl_timer_cancel(&cc->timer);	/* the setup deadline */
	cc_change_state(cc, L2TP_CC_ESTABLISHED, why);
	if (cc->state != L2TP_CC_ESTABLISHED)
		return;
	cc_hello_arm(cc);
	if (cc_is_recovery(cc)) {
		cc->dp = L2TP_DP_UP;	/* no data plane: it only resets the old one */
		cc_recovery_reset(cc);
		return;
	}
	cc_dp_create(cc);
	if (cc->state != L2TP_CC_ESTABLISHED || cc->freed)
		return;
	l2tp_sess_cc_up(cc);
}

static int cc_on_open(struct l2tp_cc *cc)
{
	cc->initiator = true;
	if (cc->cfg.auth_enabled && l2tp_auth_new_nonce(cc->auth) < 0) {
		errno = EIO;
		return -1;
	}
	cc->sent_tie_breaker = cc->cfg.send_tie_breaker;
	cc->tie_breaker = cc->cfg.tie_breaker;
	while (cc->sent_tie_breaker && cc->tie_breaker == 0)
		l2tp_cc_random(cc, &cc->tie_breaker, sizeof(cc->tie_breaker));
	if (cc_send_sccrx(cc, L2TP_MSG_SCCRQ) < 0) {
		errno = EIO;
		return -1;
	}
	cc_change_state(cc, L2TP_CC_WAIT_CTL_REPLY, "local open");
	if (cc->state == L2TP_CC_WAIT_CTL_REPLY)
		cc_setup_arm(cc);
	return 0;
}

static enum l2tp_drop cc_on_sccrq(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	const char *bad;

	cc->initiator = false;
	cc_learn_peer(cc, m);
	if (cc->refuse) {
		l2tp_reason_set(&cc->reason, cc->refuse_result, cc->refuse_error,
				cc->refuse_error != 0, "%s", cc->refuse_msg ? cc->refuse_msg : "");
		cc_stop(cc, "SCCRQ refused");
		return L2TP_DROP_NONE;
	}
	bad = cc_check_sccrx(cc, m);
	if (bad != NULL) {
		cc_stop(cc, bad);
		return m->has_unknown_mandatory ? L2TP_DROP_UNKNOWN_MANDATORY : L2TP_DROP_NONE;
	}
	if (cc->cfg.auth_enabled && l2tp_auth_new_nonce(cc->auth) < 0) {
		cc_stopf(cc, "no randomness", L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NO_RESOURCES,
			 "cannot create nonce");
		return L2TP_DROP_NONE;
	}
	if (cc_send_sccrx(cc, L2TP_MSG_SCCRP) < 0) {
		cc_closed(cc, "cannot send SCCRP");
		return L2TP_DROP_NONE;
	}
	cc_change_state(cc, L2TP_CC_WAIT_CTL_CONN, "SCCRQ accepted");
	if (cc->state == L2TP_CC_WAIT_CTL_CONN)
		cc_setup_arm(cc);
	return L2TP_DROP_NONE;
}

static enum l2tp_drop cc_on_sccrp(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	const char *bad;

	cc_learn_peer(cc, m);
	bad = cc_check_sccrx(cc, m);
	if (bad != NULL) {
		cc_stop(cc, bad);
		return m->has_unknown_mandatory ? L2TP_DROP_UNKNOWN_MANDATORY : L2TP_DROP_NONE;
	}
	if (cc->cfg.recover_ccid != 0) {
		bool scs = l2tp_msg_has(m, L2TP_AVP_SUGGESTED_CTRL_SEQ);

		cc->scs_ns = scs ? m->suggested_ns : 0;
		cc->scs_nr = scs ? m->suggested_nr : 0;
	}
	if (cc_send_simple(cc, L2TP_MSG_SCCCN) < 0) {
		cc_stopf(cc, "cannot send SCCCN", L2TP_STOPCCN_GENERAL_ERROR,
			 L2TP_ERR_NO_RESOURCES, "cannot send SCCCN");
		return L2TP_DROP_NONE;
	}
	cc_on_established(cc, "SCCRP accepted");
	return L2TP_DROP_NONE;
}

static enum l2tp_drop cc_on_scccn(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	if (m->has_unknown_mandatory) {
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR,
				L2TP_ERR_UNKNOWN_MANDATORY_AVP, true,
				"unknown mandatory AVP %u (vendor %u)",
				m->unknown_mandatory_type, m->unknown_mandatory_vendor);
		cc_stop(cc, "unknown mandatory AVP");
		return L2TP_DROP_UNKNOWN_MANDATORY;
	}
	cc_on_established(cc, "SCCCN accepted");
	return L2TP_DROP_NONE;
}

/*
 * The StopCCN recipient's part: theirs acknowledged now (and again for its
 * retransmissions until the hold ends), nothing of ours sent again.
 */
static void cc_ack_their_stopccn(struct l2tp_cc *cc)
{
	l2tp_rd_quiesce(&cc->rd);
	l2tp_rd_ack_now(&cc->rd);
}

/*
 * Crossed StopCCNs: the peer closed the connection too, so ours needs no
 * acknowledgement any more and is not retransmitted (were its ACK lost, we
 * would retransmit to a peer that may already have let go, for the whole
 * hold, which is already running since ours).  Theirs gets its ACK (3.3.2),
 * and ours, if still unacknowledged, goes once more at once: the peer may
 * never have had it (lost, or dropped while it was closing too), and were
 * the ACK lost as well it would retransmit for its whole hold to a peer
 * that is gone.  Our StopCCN, carrying Nr, acknowledges theirs too and
 * tells the peer we closed: either datagram lets it go.
 */
static void cc_ack_crossed_stopccn(struct l2tp_cc *cc)
{
	l2tp_rd_ack_now(&cc->rd);
	l2tp_rd_resend_inflight(&cc->rd);
	l2tp_rd_quiesce(&cc->rd);
}

/*
 * A StopCCN before the SCCRP (a refusal of our SCCRQ) may carry the peer's
 * Assigned CCID: from then on it goes in the header of everything we send
 * (5.4.3), the ZLBs that acknowledge that StopCCN included.  Without the
 * AVP there is nothing but CCID 0 to use.
 */
static void cc_learn_stopccn_ccid(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	if (cc->peer_ccid == 0 && l2tp_msg_has(m, L2TP_AVP_ASSIGNED_CCID))
		cc->peer_ccid = m->assigned_ccid;
}

/* 3.3.2 / 7.5: acknowledge, hold for the retransmission cycle, release. */
static enum l2tp_drop cc_on_stopccn(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	cc_learn_stopccn_ccid(cc, m);
	l2tp_reason_from_msg(&cc->reason, &m->result);
	return cc_on_stopccn_reason(cc);
}

/* A StopCCN received, its reason already in cc->reason. */
static enum l2tp_drop cc_on_stopccn_reason(struct l2tp_cc *cc)
{
	cc_change_state(cc, L2TP_CC_STOPPING, "StopCCN received");
	if (cc->state != L2TP_CC_STOPPING)
		return L2TP_DROP_NONE;
	cc_teardown(cc);
	cc_ack_their_stopccn(cc);
	usl_timer_arm(cc->timers, &cc->timer, cc->cfg.stop_hold);
	return L2TP_DROP_NONE;
}

static void cc_on_hello_due(struct l2tp_cc *cc)
{
	/* outstanding messages already probe the peer; HELLO adds nothing */
	if (l2tp_rd_idle(&cc->rd))
		cc_send_simple(cc, L2TP_MSG_HELLO);
	cc->hello_ival = cc_jitter(cc, cc->cfg.hello_interval);
	usl_timer_arm(cc->timers, &cc->timer, cc->hello_ival);
}

static void cc_on_setup_expired(struct l2tp_cc *cc)
{
	uint64_t s = (uint64_t)(cc->cfg.setup_timeout.ns / 1000000000);

	if (!l2tp_rd_idle(&cc->rd)) {
		/* still retransmitting: the retransmission limit ends it */
		usl_timer_arm(cc->timers, &cc->timer, cc->cfg.rtx_cap);
		return;
	}

	l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_NONE, true,
			"no %s within %llu s", cc->state == L2TP_CC_WAIT_CTL_REPLY ? "SCCRP" : "SCCCN",
			(unsigned long long)s);
	cc_stop(cc, cc_event_names[CC_EV_SETUP_EXPIRED]);
}

static enum l2tp_drop cc_on_unknown_mandatory(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR, L2TP_ERR_UNKNOWN_MANDATORY_AVP,
			true, "unknown mandatory AVP %u (vendor %u) in %s",
			m->unknown_mandatory_type, m->unknown_mandatory_vendor,
			l2tp_msg_type_name(m->type));
	cc_stop(cc, "unknown mandatory AVP");
	return L2TP_DROP_UNKNOWN_MANDATORY;
}

/* ------------------------------------------------------------------ */
/* the FSM: state, then event */

static enum l2tp_drop cc_fsm_idle(struct l2tp_cc *cc, enum cc_event ev,
				  const struct l2tp_msg *m)
{
	switch (ev) {
	case CC_EV_RX_SCCRQ:
		return cc_on_sccrq(cc, m);
	case CC_EV_RX_STOPCCN:
	case CC_EV_CLOSE:
		cc_closed(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	default:
		return L2TP_DROP_WRONG_STATE;
	}
}

static enum l2tp_drop cc_fsm_wait_reply(struct l2tp_cc *cc, enum cc_event ev,
					const struct l2tp_msg *m)
{
	switch (ev) {
	case CC_EV_RX_SCCRP:
		return cc_on_sccrp(cc, m);
	case CC_EV_RX_SCCCN:
		return cc_fsm_error(cc, m);
	case CC_EV_RX_STOPCCN:
		return cc_on_stopccn(cc, m);
	case CC_EV_CLOSE:
		/* told only when it acknowledged our SCCRQ (cc_peer_holds_state) */
		cc_stop(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_GIVE_UP:
		cc_closed(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_SETUP_EXPIRED:
		cc_on_setup_expired(cc);
		return L2TP_DROP_NONE;
	default:
		return L2TP_DROP_WRONG_STATE;
	}
}

static enum l2tp_drop cc_fsm_wait_conn(struct l2tp_cc *cc, enum cc_event ev,
				       const struct l2tp_msg *m)
{
	switch (ev) {
	case CC_EV_RX_SCCCN:
		return cc_on_scccn(cc, m);
	case CC_EV_RX_SCCRQ:
	case CC_EV_RX_SCCRP:
		return cc_fsm_error(cc, m);
	case CC_EV_RX_STOPCCN:
		return cc_on_stopccn(cc, m);
	case CC_EV_CLOSE:
		cc_stop(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_GIVE_UP:
		cc_closed(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_SETUP_EXPIRED:
		cc_on_setup_expired(cc);
		return L2TP_DROP_NONE;
	default:
		return L2TP_DROP_WRONG_STATE;
	}
}

/*
 * A CDN for a session we already cleared is the peer answering our own CDN
 * (freeRtr does), or its CDN crossing ours: acknowledged, nothing to do,
 * not worth a warning.
 */
static enum l2tp_drop cc_on_session_msg(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	enum l2tp_drop r = l2tp_sess_input(cc, m);

	if (r != L2TP_DROP_UNKNOWN_SESSION || m->type != L2TP_MSG_CDN)
		return r;
	cc_count_drop(cc, r);
	cc_log(debug, cc, "CDN for session %u (peer's %u), already cleared: acknowledged",
	       m->remote_sid, m->local_sid);
	return L2TP_DROP_NONE;
}

/*
 * RFC 4951, the peer's side of its failover: a failover-capable peer that
 * stopped answering is kept, sessions and data plane included, for the
 * Recovery Time it asked for (on top of the retransmissions that ran out),
 * waiting for its recovery connection.  False when that does not apply.
 */
static bool cc_await_recovery(struct l2tp_cc *cc)
{
	if (!l2tp_cc_failover_ok(cc) || cc_is_recovery(cc) || cc->fo != L2TP_FO_NONE ||
	    cc->peer_recovery_ms == 0)
		return false;
	l2tp_rd_quiesce(&cc->rd);
	cc->rd.dead = false;
	cc->fo = L2TP_FO_AWAITING_PEER;
	cc_log(info, cc, "peer not responding: kept %u ms for its recovery (RFC 4951)",
	       cc->peer_recovery_ms);
	usl_timer_arm(cc->timers, &cc->timer, usl_time_ms(cc->peer_recovery_ms));
	return true;
}

static enum l2tp_drop cc_fsm_established(struct l2tp_cc *cc, enum cc_event ev,
					 const struct l2tp_msg *m)
{
	switch (ev) {
	case CC_EV_RX_SCCRQ:
	case CC_EV_RX_SCCRP:
	case CC_EV_RX_SCCCN:
		return cc_fsm_error(cc, m);
	case CC_EV_RX_STOPCCN:
		return cc_on_stopccn(cc, m);
	case CC_EV_RX_HELLO:
		return L2TP_DROP_NONE;	/* its acknowledgement is all it asks */
	case CC_EV_RX_SESSION:
		if (cc_is_recovery(cc))
			return L2TP_DROP_WRONG_STATE;	/* RFC 4951: no session on it */
		return cc_on_session_msg(cc, m);
	case CC_EV_CLOSE:
	case CC_EV_DP_FAILED:
		cc_stop(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_GIVE_UP:
		if (!cc_await_recovery(cc))
			cc_closed(cc, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_DP_UP:
		l2tp_sess_cc_dp_up(cc);
		return L2TP_DROP_NONE;
	case CC_EV_HELLO_DUE:
		cc_on_hello_due(cc);
		return L2TP_DROP_NONE;
	default:
		return L2TP_DROP_WRONG_STATE;
	}
}

static enum l2tp_drop cc_fsm_stopping(struct l2tp_cc *cc, enum cc_event ev,
				      const struct l2tp_msg *m)
{
	switch (ev) {
	case CC_EV_STOPCCN_ACKED:
	case CC_EV_HOLD_EXPIRED:
	case CC_EV_GIVE_UP:
		cc_change_state(cc, L2TP_CC_CLOSED, cc_event_names[ev]);
		return L2TP_DROP_NONE;
	case CC_EV_RX_STOPCCN:
		cc_ack_crossed_stopccn(cc);
		return L2TP_DROP_NONE;
	case CC_EV_CLOSE:
		return L2TP_DROP_NONE;
	default:
		return L2TP_DROP_WRONG_STATE;
	}
}

static enum l2tp_drop cc_fsm(struct l2tp_cc *cc, enum cc_event ev, const struct l2tp_msg *m)
{
	if (cc->freed)
		return L2TP_DROP_WRONG_STATE;
	switch (cc->state) {
	case L2TP_CC_IDLE:
		return cc_fsm_idle(cc, ev, m);
	case L2TP_CC_WAIT_CTL_REPLY:
		return cc_fsm_wait_reply(cc, ev, m);
	case L2TP_CC_WAIT_CTL_CONN:
		return cc_fsm_wait_conn(cc, ev, m);
	case L2TP_CC_ESTABLISHED:
		return cc_fsm_established(cc, ev, m);
	case L2TP_CC_STOPPING:
		return cc_fsm_stopping(cc, ev, m);
	case L2TP_CC_CLOSED:
	default:
		return L2TP_DROP_WRONG_STATE;
	}
}

/* ------------------------------------------------------------------ */
/* input */

static bool cc_is_conn_msg(uint16_t type)
{
	switch (type) {
	case L2TP_MSG_SCCRQ:
	case L2TP_MSG_SCCRP:
	case L2TP_MSG_SCCCN:
	case L2TP_MSG_STOPCCN:
	case L2TP_MSG_HELLO:
		return true;
	default:
		return false;
	}
}

static enum cc_event cc_msg_event(uint16_t type)
{
	switch (type) {
	case L2TP_MSG_SCCRQ:	return CC_EV_RX_SCCRQ;
	case L2TP_MSG_SCCRP:	return CC_EV_RX_SCCRP;
	case L2TP_MSG_SCCCN:	return CC_EV_RX_SCCCN;
	case L2TP_MSG_STOPCCN:	return CC_EV_RX_STOPCCN;
	case L2TP_MSG_HELLO:	return CC_EV_RX_HELLO;
	default:		return CC_EV_RX_SESSION;
	}
}

/* One in-order message to the FSM. */
static enum l2tp_drop cc_dispatch(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	enum l2tp_drop r;

	if (m->type <= L2TP_MSG_TYPE_MAX)
		cc->st.rx_msgs[m->type]++;
	if (m->has_unknown_mandatory && cc_is_conn_msg(m->type) &&
	    m->type != L2TP_MSG_STOPCCN && m->type != L2TP_MSG_SCCRQ &&
	    m->type != L2TP_MSG_SCCRP && cc->state != L2TP_CC_STOPPING)
		return cc_drop(cc, cc_on_unknown_mandatory(cc, m));
	switch (m->type) {
	case L2TP_MSG_SCCRQ: case L2TP_MSG_SCCRP: case L2TP_MSG_SCCCN:
	case L2TP_MSG_STOPCCN: case L2TP_MSG_HELLO:
	case L2TP_MSG_OCRQ: case L2TP_MSG_OCRP: case L2TP_MSG_OCCN:
	case L2TP_MSG_ICRQ: case L2TP_MSG_ICRP: case L2TP_MSG_ICCN:
	case L2TP_MSG_CDN: case L2TP_MSG_WEN: case L2TP_MSG_SLI:
		r = cc_fsm(cc, cc_msg_event(m->type), m);
		break;
	case L2TP_MSG_FSQ:
	case L2TP_MSG_FSR:
		/* RFC 4951 session reconciliation, on the recovered connection only */
		if (cc->state != L2TP_CC_ESTABLISHED || cc_is_recovery(cc))
			r = L2TP_DROP_WRONG_STATE;
		else if (m->type == L2TP_MSG_FSQ)
			r = l2tp_sess_on_fsq(cc, m);
		else
			r = l2tp_sess_on_fsr(cc, m);
		break;
	default:
		/* an unknown type without the M bit: ignored (5.4.1) */
		r = L2TP_DROP_NONE;
		break;
	}
	return r == L2TP_DROP_NONE ? r : cc_drop(cc, r);
}

/* The error code (5.4.2) that names a decoding problem. */
static uint16_t cc_error_code(enum l2tp_drop why)
{
	switch (why) {
	case L2TP_DROP_AVP_TOO_SHORT:
	case L2TP_DROP_AVP_OVERRUN:
	case L2TP_DROP_BAD_AVP_LENGTH:
	case L2TP_DROP_HIDDEN_BAD_LENGTH:
		return L2TP_ERR_BAD_LENGTH;
	default:
		return L2TP_ERR_BAD_VALUE;
	}
}

/*
 * 7.1: an in-sequence message that was acknowledged but cannot be used (a
 * malformed AVP with M=1, a required AVP missing).  A session message
 * clears its session with a CDN, any other the connection with a StopCCN,
 * result 2 and the error code; a malformed StopCCN or CDN still ends what
 * it was meant to end.
 */
static enum l2tp_drop cc_on_malformed(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	char text[L2TP_REASON_MAX], where[16];
	const char *did;
	uint16_t err = cc_error_code(m->bad);

	if (m->type <= L2TP_MSG_TYPE_MAX)
		cc->st.rx_msgs[m->type]++;
	/* a header cut short or overrunning the message has no AVP type to name */
	if (m->bad == L2TP_DROP_AVP_TOO_SHORT || m->bad == L2TP_DROP_AVP_OVERRUN)
		snprintf(where, sizeof(where), "AVP header");
	else
		snprintf(where, sizeof(where), "AVP %u", m->bad_avp);
	snprintf(text, sizeof(text), "%s %s: %s (%s)",
		 m->bad == L2TP_DROP_MISSING_AVP ? "incomplete" : "malformed",
		 l2tp_msg_type_name(m->type), l2tp_drop_name(m->bad), where);
	cc_count_drop(cc, m->bad);
	if (!cc_is_conn_msg(m->type)) {
		did = cc->state == L2TP_CC_ESTABLISHED ? l2tp_sess_answer_malformed(cc, m, err, text)
						       : "ignored: the connection is not established";
	} else if (cc->state == L2TP_CC_STOPPING) {
		did = "ignored: the connection is stopping";
	} else if (m->type == L2TP_MSG_STOPCCN) {
		cc_learn_stopccn_ccid(cc, m);
		l2tp_reason_set(&cc->reason, L2TP_STOPCCN_GENERAL_ERROR, err, true, "%s", text);
		cc_on_stopccn_reason(cc);
		did = "the connection closes as the StopCCN asks";
	} else {
		/* an SCCRP's Assigned CCID, if it came, lets our StopCCN reach the peer */
		if (m->type == L2TP_MSG_SCCRP && cc->peer_ccid == 0 && m->assigned_ccid != 0)
			cc->peer_ccid = m->assigned_ccid;
		cc_stopf(cc, "malformed message", L2TP_STOPCCN_GENERAL_ERROR, err, text);
		did = "answered with StopCCN result 2";
	}
	/* acknowledged and dealt with (7.1): not a dropped message */
	cc_log(info, cc, "%s: acknowledged, %s (error %u)", text, did, err);
	return L2TP_DROP_NONE;
}

/* One in-order message: to the FSM, or answered as malformed. */
static enum l2tp_drop cc_deliver(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	return m->bad != L2TP_DROP_NONE ? cc_on_malformed(cc, m) : cc_dispatch(cc, m);
}

/* Messages that were held behind a gap, now in order. */
static void cc_deliver_held(struct l2tp_cc *cc, struct l2tp_msg *m)
{
	struct l2tp_rd_buf *b;
	struct l2tp_secret sec = { cc->cfg.secret, cc->cfg.secret_len };
	enum l2tp_drop r;

	while (!cc->freed && cc->state != L2TP_CC_CLOSED &&
	       (b = l2tp_rd_next_held(&cc->rd)) != NULL) {
		/* verified on arrival; only an unknown type fails again */
		r = l2tp_msg_decode(m, b->buf, b->len, false, &sec);
		if (r == L2TP_DROP_NONE || m->type_ok)
			cc_deliver(cc, m);
		else if (r == L2TP_DROP_UNKNOWN_MSG_TYPE)
			cc_on_unknown_type(cc, m);
		free(b);
	}
}

static enum l2tp_drop cc_rd_verdict(struct l2tp_cc *cc, enum l2tp_rd_verdict v,
				    struct l2tp_msg *m)
{
	enum l2tp_drop r;

	switch (v) {
	case L2TP_RD_DELIVER:
		r = cc_deliver(cc, m);
		cc_deliver_held(cc, m);
		return r;
	case L2TP_RD_ACK_ONLY:
		cc->st.rx_msgs[m->type <= L2TP_MSG_TYPE_MAX ? m->type : 0]++;
		return L2TP_DROP_NONE;
	case L2TP_RD_HELD:
		cc->st.rx_held++;
		return L2TP_DROP_NONE;
	case L2TP_RD_DUPLICATE:
		cc->st.rx_duplicates++;
		return cc_drop(cc, L2TP_DROP_DUPLICATE);
	case L2TP_RD_NR_INVALID:
		return cc_drop(cc, L2TP_DROP_NR_INVALID);
	case L2TP_RD_OUT_OF_WINDOW:
	default:
		return cc_drop(cc, L2TP_DROP_OUT_OF_WINDOW);
	}
}

/* Decoded, addressed to us and (4.3) authenticated before any content is used. */
static enum l2tp_drop cc_accept(struct l2tp_cc *cc, struct l2tp_msg *m,
				const uint8_t *buf, size_t len)
{
	struct l2tp_secret sec = { cc->cfg.secret, cc->cfg.secret_len };
	enum l2tp_drop r;

	r = l2tp_msg_decode(m, buf, len, false, &sec);
	if (r != L2TP_DROP_NONE && !m->type_ok)
		return r;	/* no header or type to act upon: not even acknowledged */
	r = L2TP_DROP_NONE;	/* a problem past that is m->bad: answered after delivery */
	if (m->ccid == 0 && m->type != L2TP_MSG_SCCRQ)
		return L2TP_DROP_ZERO_CCID;
	if (m->ccid != 0 && m->ccid != cc->local_ccid)
		return L2TP_DROP_UNKNOWN_CCID;
	if (cc->cfg.auth_enabled)
		r = l2tp_auth_verify(cc->auth, m, buf, len, false);
	else if (m->n_digests > 0 && !l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE))
		/* 4.3: an integrity check; an invalid one means corruption */
		r = l2tp_auth_verify(cc_integrity_auth(), m, buf, len, false);
	if (r != L2TP_DROP_NONE)
		return r;
	if (cc->state == L2TP_CC_IDLE && (m->type != L2TP_MSG_SCCRQ || m->bad != L2TP_DROP_NONE))
		return L2TP_DROP_WRONG_STATE;
	return L2TP_DROP_NONE;	/* m->bad, if set, is answered after reliable delivery */
}

/*
 * 5.4.1: an unknown (or vendor) message type with M=1 clears the
 * connection; with M=0 it is ignored.  Either way it took an Ns slot, so it
 * goes through reliable delivery first (only when nothing has to be
 * verified: without a full decode a digest cannot be checked).
 */
static bool cc_unknown_type_usable(const struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	return !cc->cfg.auth_enabled && m->ccid == cc->local_ccid &&
	       cc->state != L2TP_CC_IDLE && cc->state != L2TP_CC_CLOSED;
}

static enum l2tp_drop cc_on_unknown_type(struct l2tp_cc *cc, const struct l2tp_msg *m)
{
	char text[64];

	if (m->type_m && cc->state != L2TP_CC_STOPPING) {
		snprintf(text, sizeof(text), "unknown mandatory message type %u", m->type);
		cc_stopf(cc, "unknown message type", L2TP_STOPCCN_GENERAL_ERROR,
			 L2TP_ERR_NONE, text);
	}
	return cc_drop(cc, L2TP_DROP_UNKNOWN_MSG_TYPE);
}

/*
 * A sign of life is a message whose Ns and Nr passed reliable delivery's
 * checks: one that merely names our CCID proves nothing (it may be forged).
 */
static void cc_note_alive(struct l2tp_cc *cc, enum l2tp_rd_verdict v)
{
	if (v != L2TP_RD_NR_INVALID && v != L2TP_RD_OUT_OF_WINDOW)
		cc->last_rx = usl_timerset_now(cc->timers);
}

/*
 * The peer we were keeping for its recovery speaks on the old connection
 * after all (the loss was the path's): what we gave up on is gone, so the
 * sessions are reconciled as after a failover.
 */
static void cc_peer_back(struct l2tp_cc *cc)
{
	cc->fo = L2TP_FO_NONE;
	usl_timer_cancel(&cc->timer);
	cc_hello_arm(cc);
	cc_log(info, cc, "peer responding again: reconciling sessions");
	l2tp_sess_failover_query(cc);
}

static enum l2tp_drop cc_input(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	struct l2tp_msg m;
	enum l2tp_drop r;
	enum l2tp_rd_verdict v;

	if (cc->freed || cc->state == L2TP_CC_CLOSED)
		return L2TP_DROP_WRONG_STATE;
	if (cc->fo == L2TP_FO_RESYNC)	/* RFC 4951: silently discarded until the reset */
		return cc_drop(cc, L2TP_DROP_WRONG_STATE);
	r = cc_accept(cc, &m, buf, len);
	if (r == L2TP_DROP_UNKNOWN_MSG_TYPE && cc_unknown_type_usable(cc, &m)) {
		v = l2tp_rd_input(&cc->rd, m.ns, m.nr, true, buf, len);
		cc_note_alive(cc, v);
		if (cc->freed || v != L2TP_RD_DELIVER)
			return cc->freed ? L2TP_DROP_NONE : cc_rd_verdict(cc, v, &m);
		r = cc_on_unknown_type(cc, &m);
		cc_deliver_held(cc, &m);
		return r;
	}
	if (r != L2TP_DROP_NONE)
		return cc_drop(cc, r);
	v = l2tp_rd_input(&cc->rd, m.ns, m.nr, !cc_is_ack(m.type), buf, len);
	cc_note_alive(cc, v);
	if (cc->freed)
		return L2TP_DROP_NONE;
	if (cc->fo == L2TP_FO_AWAITING_PEER && v != L2TP_RD_NR_INVALID &&
	    v != L2TP_RD_OUT_OF_WINDOW)
		cc_peer_back(cc);
	return cc_rd_verdict(cc, v, &m);
}

enum l2tp_drop l2tp_cc_input(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	enum l2tp_drop r;

	l2tp_cc_hold(cc);
	r = cc_input(cc, buf, len);
	/* the ACK rule's "at once", unless a reply already carried Nr */
	if (!cc->freed)
		l2tp_rd_ack_flush(&cc->rd);
	l2tp_cc_release(cc);
	return r;
}

enum l2tp_drop l2tp_cc_input_refuse(struct l2tp_cc *cc, const uint8_t *buf, size_t len,
				    uint16_t result, uint16_t error, const char *msg)
{
	enum l2tp_drop r;

	if (cc->state != L2TP_CC_IDLE)
		return L2TP_DROP_WRONG_STATE;
	l2tp_cc_hold(cc);
	cc->refuse = true;
	cc->refuse_result = result;
	cc->refuse_error = error;
	cc->refuse_msg = msg;
	r = cc_input(cc, buf, len);
	cc->refuse = false;
	cc->refuse_msg = NULL;
	l2tp_cc_release(cc);
	return r;
}

/* ------------------------------------------------------------------ */
/* local requests */

int l2tp_cc_connect(struct l2tp_cc *cc)
{
	int rc;

	if (cc->freed || cc->state != L2TP_CC_IDLE) {
		errno = EISCONN;
		return -1;
	}
	l2tp_cc_hold(cc);
	rc = cc_on_open(cc);
	l2tp_cc_release(cc);
	return rc;
}

void l2tp_cc_close(struct l2tp_cc *cc, uint16_t result, uint16_t error, const char *msg)
{
	if (cc->freed || cc->state >= L2TP_CC_STOPPING)
		return;
	l2tp_cc_hold(cc);
	l2tp_reason_set(&cc->reason, result, error, error != 0 ||
			result == L2TP_STOPCCN_GENERAL_ERROR, "%s", msg ? msg : "");
	cc_fsm(cc, CC_EV_CLOSE, NULL);
	l2tp_cc_release(cc);
}

void l2tp_cc_discard(struct l2tp_cc *cc, uint16_t result, const char *msg)
{
	if (cc->freed || cc->state == L2TP_CC_CLOSED)
		return;
	l2tp_cc_hold(cc);
	l2tp_reason_set(&cc->reason, result, 0, false, "%s", msg ? msg : "");
	cc_closed(cc, "discarded");
	l2tp_cc_release(cc);
}

enum l2tp_tie l2tp_cc_tie_break(const struct l2tp_cc *ours, const struct l2tp_msg *theirs)
{
	bool t = l2tp_msg_has(theirs, L2TP_AVP_TIE_BREAKER);

	if (ours->state != L2TP_CC_WAIT_CTL_REPLY || (!ours->sent_tie_breaker && !t))
		return L2TP_TIE_NONE;
	if (!t)
		return L2TP_TIE_WE_WIN;
	if (!ours->sent_tie_breaker)
		return L2TP_TIE_WE_LOSE;
	if (ours->tie_breaker == theirs->tie_breaker)
		return L2TP_TIE_RESTART;
	return ours->tie_breaker < theirs->tie_breaker ? L2TP_TIE_WE_WIN : L2TP_TIE_WE_LOSE;
}

/* ------------------------------------------------------------------ */
/* the listener: SCCRQs checked before anything exists for them */

/* The Message Digest of an SCCRQ, verified with cfg's key (4.3). */
static enum l2tp_drop sccrq_verify_digest(const struct l2tp_cc_cfg *cfg, const struct l2tp_msg *m,
					  const uint8_t *buf, size_t len)
{
	struct l2tp_auth a;
	enum l2tp_drop r;

	if (!cfg->auth_enabled) {
		/* an integrity check only (no nonce): an invalid one is corruption */
		if (m->n_digests == 0 || l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE))
			return L2TP_DROP_NONE;
		return l2tp_auth_verify(cc_integrity_auth(), m, buf, len, false);
	}
	if (!l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE))
		return L2TP_DROP_NONE;	/* refused below: the peer does not authenticate */
	l2tp_auth_init(&a);
	if (l2tp_auth_add_key(&a, cfg->digest_type, cfg->secret, cfg->secret_len) < 0)
		return L2TP_DROP_DIGEST_MISMATCH;
	r = l2tp_auth_verify(&a, m, buf, len, false);
	explicit_bzero(&a, sizeof(a));
	return r;
}

enum l2tp_drop l2tp_cc_check_sccrq(const struct l2tp_cc_cfg *cfg, const struct l2tp_msg *m,
				   const uint8_t *buf, size_t len, struct l2tp_result *refuse)
{
	static char text[L2TP_REASON_MAX];
	enum l2tp_drop r;

	memset(refuse, 0, sizeof(*refuse));
	if (m->type != L2TP_MSG_SCCRQ)
		return L2TP_DROP_ZERO_CCID;
	r = sccrq_verify_digest(cfg, m, buf, len);
	if (r != L2TP_DROP_NONE)
		return r;
	if (sccrx_problem(cfg->auth_enabled, m, refuse, text, sizeof(text)) == NULL)
		return L2TP_DROP_NONE;
	refuse->message.p = (const uint8_t *)text;
	refuse->message.len = (uint16_t)strlen(text);
	if (refuse->result == L2TP_STOPCCN_NOT_AUTHORIZED)
		return L2TP_DROP_PEER_REFUSED;
	return m->has_unknown_mandatory ? L2TP_DROP_UNKNOWN_MANDATORY : L2TP_DROP_MISSING_AVP;
}

/* The refusal's message, and with a (keyed) the Message Digest AVP reserved. */
static int refusal_encode(const struct l2tp_msg *sccrq, const struct l2tp_result *why,
			  const struct l2tp_auth *a, uint8_t *buf, size_t cap)
{
	struct l2tp_msg m;

	if (sccrq->assigned_ccid == 0)
		return -1;	/* nobody could receive it */
	cc_msg_init(&m, L2TP_MSG_STOPCCN);
	m.ver = 3;
	m.ccid = sccrq->assigned_ccid;
	m.ns = 0;
	m.nr = (uint16_t)(sccrq->ns + 1);
	m.result = *why;
	l2tp_msg_set(&m, L2TP_AVP_RESULT_CODE);
	if (a != NULL)
		l2tp_auth_prepare(a, &m);
	return l2tp_msg_encode(&m, buf, cap, false, 0, NULL);
}

int l2tp_cc_encode_refusal(const struct l2tp_msg *sccrq, const struct l2tp_result *why,
			   uint8_t *buf, size_t cap)
{
	return refusal_encode(sccrq, why, NULL, buf, cap);
}

/*
 * The key a refusal is signed with: the SCCRQ carries a nonce and a digest
 * of the secret's key (of the digest's own type), so its sender knows the
 * secret and computes what we sign.  We advertised no nonce (there is no
 * SCCRP), so local_nonce is empty and the SCCRQ's nonce is the remote one.
 * Never for an SCCRQ that does not verify: the StopCCN would be a digest
 * over a nonce of the sender's choosing.
 */
static bool refusal_key(struct l2tp_auth *a, const struct l2tp_msg *sccrq, const uint8_t *sbuf,
			size_t slen, const uint8_t *secret, size_t secret_len)
{
	l2tp_auth_init(a);
	if (secret_len == 0 || sccrq->n_digests == 0 || sccrq->nonce.len == 0 ||
	    !l2tp_msg_has(sccrq, L2TP_AVP_CTRL_MSG_AUTH_NONCE))
		return false;
	if (l2tp_auth_add_key(a, (enum l2tp_digest_type)sccrq->digest[0].type, secret,
			      secret_len) < 0 ||
	    l2tp_auth_verify(a, sccrq, sbuf, slen, false) != L2TP_DROP_NONE ||
	    l2tp_auth_set_peer_nonce(a, &sccrq->nonce) < 0)
		return false;
	return true;
}

int l2tp_cc_encode_refusal_signed(const struct l2tp_msg *sccrq, const uint8_t *sbuf, size_t slen,
				  const uint8_t *secret, size_t secret_len,
				  const struct l2tp_result *why, uint8_t *buf, size_t cap,
				  bool *is_signed)
{
	struct l2tp_auth a;
	int len;

	*is_signed = refusal_key(&a, sccrq, sbuf, slen, secret, secret_len);
	len = refusal_encode(sccrq, why, *is_signed ? &a : NULL, buf, cap);
	if (len > 0 && *is_signed && l2tp_auth_sign(&a, buf, (size_t)len, false) < 0)
		len = -1;
	explicit_bzero(&a, sizeof(a));
	return len;
}

int l2tp_cc_encode_unknown_ccid(const struct l2tp_msg *hdr, uint8_t *buf, size_t cap)
{
	struct l2tp_msg m;

	if (hdr->ccid == 0)
		return -1;
	cc_msg_init(&m, L2TP_MSG_STOPCCN);
	m.ver = 3;
	m.ccid = 0;		/* the peer's CCID for it is what we forgot */
	m.ns = 0;
	m.nr = (uint16_t)(hdr->ns + 1);
	m.result.result = L2TP_STOPCCN_GENERAL_ERROR;
	m.result.error = L2TP_ERR_NO_CONTROL_CONNECTION;
	m.result.has_error = true;
	l2tp_msg_set(&m, L2TP_AVP_RESULT_CODE);
	m.assigned_ccid = hdr->ccid;	/* 5.4.1: for the peer's reverse lookup */
	l2tp_msg_set(&m, L2TP_AVP_ASSIGNED_CCID);
	return l2tp_msg_encode(&m, buf, cap, false, 0, NULL);
}

bool l2tp_cc_has_deadline(const struct l2tp_cc *cc)
{
	switch (cc->state) {
	case L2TP_CC_ESTABLISHED:
	case L2TP_CC_CLOSED:
		return true;
	case L2TP_CC_IDLE:
		return false;
	default:
		return usl_timer_armed(&cc->timer);
	}
}

/* ------------------------------------------------------------------ */
/* accessors */

void l2tp_cc_reset_counters(struct l2tp_cc *cc)
{
	uint32_t *drops = cc->st.drops;

	memset(&cc->st, 0, sizeof(cc->st));
	if (drops != NULL)
		memset(drops, 0, L2TP_DROP__COUNT * sizeof(*drops));
	cc->st.drops = drops;
}

void l2tp_cc_get_stats(const struct l2tp_cc *cc, struct l2tp_cc_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i <= L2TP_MSG_TYPE_MAX; i++) {
		out->rx_msgs[i] = cc->st.rx_msgs[i];
		out->tx_msgs[i] = cc->st.tx_msgs[i];
	}
	for (int i = 0; i < L2TP_DROP__COUNT; i++)
		out->drops[i] = cc->st.drops ? cc->st.drops[i] : 0;
	out->retransmits = cc->st.retransmits;
	out->rx_duplicates = cc->st.rx_duplicates;
	out->rx_held = cc->st.rx_held;
	out->wen_received = cc->st.wen_received;
	out->rx_no_serial = cc->st.rx_no_serial;
	out->cwnd = cc->rd.cwnd;
	out->ssthresh = cc->rd.ssthresh;
	out->peer_rx_window = cc->peer_rx_window ? cc->peer_rx_window : 4;
	out->tx_window = cc->rd.peer_rwin;
	out->in_flight = cc->rd.n_inflight;
	out->queued = cc->rd.n_pending;
	out->next_ns = cc->rd.snd_nxt;
	out->next_nr = cc->rd.rcv_nxt;
	out->sessions = cc->n_sessions;
}

enum l2tp_cc_state l2tp_cc_state(const struct l2tp_cc *cc) { return cc->state; }
bool l2tp_cc_holding(const struct l2tp_cc *cc)
{
	return cc->state == L2TP_CC_STOPPING && l2tp_rd_idle(&cc->rd);
}
enum l2tp_dp_state l2tp_cc_dp_state(const struct l2tp_cc *cc) { return cc->dp; }
bool l2tp_cc_is_initiator(const struct l2tp_cc *cc) { return cc->initiator; }
uint32_t l2tp_cc_local_ccid(const struct l2tp_cc *cc) { return cc->local_ccid; }
uint32_t l2tp_cc_peer_ccid(const struct l2tp_cc *cc) { return cc->peer_ccid; }
const char *l2tp_cc_peer_host_name(const struct l2tp_cc *cc)
{
	return cc->peer_host_name ? cc->peer_host_name : "";
}

const char *l2tp_cc_peer_vendor_name(const struct l2tp_cc *cc)
{
	return cc->peer_vendor_name ? cc->peer_vendor_name : "";
}
uint32_t l2tp_cc_peer_router_id(const struct l2tp_cc *cc) { return cc->peer_router_id; }
uint64_t l2tp_cc_tie_breaker(const struct l2tp_cc *cc) { return cc->tie_breaker; }
bool l2tp_cc_sent_tie_breaker(const struct l2tp_cc *cc) { return cc->sent_tie_breaker; }
const struct l2tp_cc_cfg *l2tp_cc_cfg(const struct l2tp_cc *cc) { return &cc->cfg; }
void *l2tp_cc_user(const struct l2tp_cc *cc) { return cc->user; }
void l2tp_cc_set_user(struct l2tp_cc *cc, void *user) { cc->user = user; }

unsigned l2tp_cc_peer_pw_caps(const struct l2tp_cc *cc, const uint16_t **caps)
{
	*caps = cc->peer_pw_caps;
	return cc->n_peer_pw_caps;
}

bool l2tp_cc_peer_has_pw(const struct l2tp_cc *cc, uint16_t pw_type)
{
	unsigned i;

	for (i = 0; i < cc->n_peer_pw_caps; i++)
		if (cc->peer_pw_caps[i] == pw_type)
			return true;
	return false;
}

bool l2tp_cc_auth_on(const struct l2tp_cc *cc)
{
	return cc->cfg.auth_enabled && cc->auth->peer_nonce_len > 0 &&
	       cc->auth->local_nonce_len > 0;
}

const struct l2tp_result *l2tp_cc_close_reason(const struct l2tp_cc *cc)
{
	return cc->state >= L2TP_CC_STOPPING && cc->reason.set ? &cc->reason.r : NULL;
}

/* ------------------------------------------------------------------ */
/* restart handover */

bool l2tp_cc_can_save(const struct l2tp_cc *cc)
{
	return cc->state == L2TP_CC_ESTABLISHED && cc->dp == L2TP_DP_UP && !cc->freed &&
	       !cc->rd.dead;
}

static void cc_save_cfg(const struct l2tp_cc_cfg *c, struct usl_pack *w)
{
	usl_pack_str(w, c->host_name);
	usl_pack_u32(w, c->router_id);
	usl_pack_str(w, c->vendor_name);
	usl_pack_u8(w, (uint8_t)c->encap);
	usl_pack_u16(w, c->rx_window);
	usl_pack_u16(w, c->tx_window_max);
	usl_pack_u64(w, (uint64_t)c->rtx_initial.ns);
	usl_pack_u64(w, (uint64_t)c->rtx_cap.ns);
	usl_pack_u32(w, c->max_retries);
	usl_pack_u32(w, c->sccrq_max_retries);
	usl_pack_u32(w, c->sccrp_max_retries);
	usl_pack_u64(w, (uint64_t)c->ack_delay.ns);
	usl_pack_u8(w, c->explicit_ack);
	usl_pack_u64(w, (uint64_t)c->hello_interval.ns);
	usl_pack_u32(w, c->hello_jitter_pct);
	usl_pack_u64(w, (uint64_t)c->stop_hold.ns);
	usl_pack_u8(w, c->n_pw_caps);
	for (unsigned i = 0; i < c->n_pw_caps; i++)
		usl_pack_u16(w, c->pw_caps[i]);
	usl_pack_u8(w, c->auth_enabled);
	usl_pack_blob(w, c->secret, c->secret_len);
	usl_pack_u8(w, (uint8_t)c->digest_type);
	usl_pack_u8(w, c->send_tie_breaker);
	usl_pack_u64(w, c->tie_breaker);
	usl_pack_u64(w, (uint64_t)c->sess_setup_timeout.ns);
	usl_pack_u64(w, (uint64_t)c->setup_timeout.ns);
	usl_pack_u8(w, c->hide_avps);
	usl_pack_u8(w, c->failover);
	usl_pack_u32(w, c->recovery_time_ms);
}

static usl_time unpack_time(struct usl_unpack *r)
{
	return usl_time_ns((int64_t)usl_unpack_u64(r));
}

/* Fills c from r; its strings point into strs (freed by the caller), the secret into r. */
static void cc_restore_cfg(struct l2tp_cc_cfg *c, char *strs[2], struct usl_unpack *r)
{
	size_t secret_len;

	l2tp_cc_cfg_init(c);
	strs[0] = usl_unpack_str(r, L2TP_NAME_MAX, NULL);
	c->host_name = strs[0];
	c->router_id = usl_unpack_u32(r);
	strs[1] = usl_unpack_str(r, L2TP_NAME_MAX, NULL);
	c->vendor_name = strs[1];
	c->encap = (enum l2tp_encap)usl_unpack_u8(r);
	c->rx_window = usl_unpack_u16(r);
	c->tx_window_max = usl_unpack_u16(r);
	c->rtx_initial = unpack_time(r);
	c->rtx_cap = unpack_time(r);
	c->max_retries = usl_unpack_u32(r);
	c->sccrq_max_retries = usl_unpack_u32(r);
	c->sccrp_max_retries = usl_unpack_u32(r);
	c->ack_delay = unpack_time(r);
	c->explicit_ack = usl_unpack_bool(r);
	c->hello_interval = unpack_time(r);
	c->hello_jitter_pct = usl_unpack_u32(r);
	c->stop_hold = unpack_time(r);
	c->n_pw_caps = usl_unpack_u8(r);
	if (c->n_pw_caps > L2TP_MAX_PW_CAPS) {
		r->bad = true;
		return;
	}
	for (unsigned i = 0; i < c->n_pw_caps; i++)
		c->pw_caps[i] = usl_unpack_u16(r);
	c->auth_enabled = usl_unpack_bool(r);
	c->secret = usl_unpack_blob(r, &secret_len);
	c->secret_len = secret_len;
	c->digest_type = (enum l2tp_digest_type)usl_unpack_u8(r);
	c->send_tie_breaker = usl_unpack_bool(r);
	c->tie_breaker = usl_unpack_u64(r);
	c->sess_setup_timeout = unpack_time(r);
	c->setup_timeout = unpack_time(r);
	c->hide_avps = usl_unpack_bool(r);
	if (r->version == 0 || r->version >= 2) {
		c->failover = usl_unpack_bool(r);
		c->recovery_time_ms = usl_unpack_u32(r);
	}
	if (c->host_name == NULL)
		r->bad = true;
}

static void cc_save_counters(const struct l2tp_cc *cc, struct usl_pack *w)
{
	for (unsigned i = 0; i <= L2TP_MSG_TYPE_SAVED; i++) {
		usl_pack_u32(w, cc->st.rx_msgs[i]);
		usl_pack_u32(w, cc->st.tx_msgs[i]);
	}
	usl_pack_u8(w, cc->st.drops != NULL);
	for (unsigned i = 0; cc->st.drops != NULL && i < L2TP_DROP__COUNT; i++)
		usl_pack_u32(w, cc->st.drops[i]);
	usl_pack_u32(w, cc->st.retransmits);
	usl_pack_u32(w, cc->st.rx_duplicates);
	usl_pack_u32(w, cc->st.rx_held);
	usl_pack_u32(w, cc->st.wen_received);
	usl_pack_u32(w, cc->st.rx_no_serial);
}

static void cc_restore_counters(struct l2tp_cc *cc, struct usl_unpack *r)
{
	for (unsigned i = 0; i <= L2TP_MSG_TYPE_SAVED; i++) {
		cc->st.rx_msgs[i] = usl_unpack_u32(r);
		cc->st.tx_msgs[i] = usl_unpack_u32(r);
	}
	if (usl_unpack_bool(r)) {
		cc->st.drops = calloc(L2TP_DROP__COUNT, sizeof(*cc->st.drops));
		if (cc->st.drops == NULL)
			r->bad = true;
		for (unsigned i = 0; cc->st.drops != NULL && i < L2TP_DROP__COUNT; i++)
			cc->st.drops[i] = usl_unpack_u32(r);
	}
	cc->st.retransmits = usl_unpack_u32(r);
	cc->st.rx_duplicates = usl_unpack_u32(r);
	cc->st.rx_held = usl_unpack_u32(r);
	cc->st.wen_received = usl_unpack_u32(r);
	cc->st.rx_no_serial = usl_unpack_u32(r);
}

static void cc_save_auth(const struct l2tp_auth *a, struct usl_pack *w)
{
	usl_pack_u8(w, a != NULL);
	if (a == NULL)
		return;
	usl_pack_blob(w, a->local_nonce, a->local_nonce_len);
	usl_pack_blob(w, a->peer_nonce, a->peer_nonce_len);
}

static void cc_restore_auth(struct l2tp_auth *a, struct usl_unpack *r)
{
	const uint8_t *p, *q;
	size_t n, m;

	if (usl_unpack_bool(r) != (a != NULL)) {
		r->bad = true;
		return;
	}
	if (a == NULL)
		return;
	p = usl_unpack_blob(r, &n);
	q = usl_unpack_blob(r, &m);
	if (r->bad || n > sizeof(a->local_nonce) || m > sizeof(a->peer_nonce)) {
		r->bad = true;
		return;
	}
	memcpy(a->local_nonce, p, n);
	a->local_nonce_len = (uint8_t)n;
	memcpy(a->peer_nonce, q, m);
	a->peer_nonce_len = (uint8_t)m;
}

int l2tp_cc_save(struct l2tp_cc *cc, struct usl_pack *w)
{
	usl_time now = usl_timerset_now(cc->timers);
	struct usl_list *pos;
	uint32_t n = 0;

	if (!l2tp_cc_can_save(cc)) {
		errno = EBUSY;
		return -1;
	}
	cc_save_cfg(&cc->cfg, w);
	usl_pack_u32(w, cc->local_ccid);
	usl_pack_u32(w, cc->peer_ccid);
	usl_pack_u8(w, cc->initiator);
	usl_pack_str(w, cc->peer_host_name);
	usl_pack_str(w, cc->peer_vendor_name);
	usl_pack_u32(w, cc->peer_router_id);
	usl_pack_u8(w, cc->n_peer_pw_caps);
	for (unsigned i = 0; i < cc->n_peer_pw_caps; i++)
		usl_pack_u16(w, cc->peer_pw_caps[i]);
	usl_pack_u16(w, cc->peer_rx_window);
	usl_pack_u64(w, cc->tie_breaker);
	usl_pack_u8(w, cc->sent_tie_breaker);
	usl_pack_u8(w, cc->sent_sccrx);
	usl_pack_u64(w, (uint64_t)usl_time_sub(now, cc->last_rx).ns);
	usl_pack_u32(w, cc->next_serial);
	usl_pack_u16(w, cc->peer_fo_flags);
	usl_pack_u32(w, cc->peer_recovery_ms);
	cc_save_auth(cc->auth, w);
	cc_save_counters(cc, w);
	l2tp_rd_save(&cc->rd, w);
	usl_list_foreach(pos, &cc->sessions)
		n += l2tp_sess_can_save(usl_list_entry(pos, struct l2tp_sess, link));
	usl_pack_u32(w, n);
	usl_list_foreach(pos, &cc->sessions) {
		struct l2tp_sess *s = usl_list_entry(pos, struct l2tp_sess, link);

		if (l2tp_sess_can_save(s))
			l2tp_sess_save(s, w);
	}
	return w->failed ? -1 : 0;
}

/* The connection's own fields after its configuration; false when malformed. */
static bool cc_restore_fields(struct l2tp_cc *cc, struct usl_unpack *r)
{
	usl_time age;

	cc->peer_ccid = usl_unpack_u32(r);
	cc->initiator = usl_unpack_bool(r);
	cc->peer_host_name = usl_unpack_str(r, L2TP_NAME_MAX, NULL);
	cc->peer_vendor_name = usl_unpack_str(r, L2TP_NAME_MAX, NULL);
	cc->peer_router_id = usl_unpack_u32(r);
	cc->n_peer_pw_caps = usl_unpack_u8(r);
	if (cc->n_peer_pw_caps > L2TP_MAX_PW_CAPS)
		return false;
	for (unsigned i = 0; i < cc->n_peer_pw_caps; i++)
		cc->peer_pw_caps[i] = usl_unpack_u16(r);
	cc->peer_rx_window = usl_unpack_u16(r);
	cc->tie_breaker = usl_unpack_u64(r);
	cc->sent_tie_breaker = usl_unpack_bool(r);
	cc->sent_sccrx = usl_unpack_bool(r);
	age = unpack_time(r);
	cc->next_serial = usl_unpack_u32(r);
	if (r->version == 0 || r->version >= 2) {	/* a restart's state v2: RFC 4951 */
		cc->peer_fo_flags = usl_unpack_u16(r);
		cc->peer_recovery_ms = usl_unpack_u32(r);
		if (cc->peer_recovery_ms > L2TP_RECOVERY_MAX_MS)
			cc->peer_recovery_ms = L2TP_RECOVERY_MAX_MS;
	}
	if (r->bad || cc->peer_ccid == 0 || age.ns < 0)
		return false;
	/* the restart's own time counts as silence: a HELLO follows sooner, not later */
	cc->last_rx = usl_time_sub(usl_timerset_now(cc->timers), age);
	cc_restore_auth(cc->auth, r);
	cc_restore_counters(cc, r);
	return !r->bad && l2tp_rd_restore(&cc->rd, r) == 0;
}

struct l2tp_cc *l2tp_cc_restore(struct usl_unpack *r, const struct l2tp_cc_ops *ops,
				struct usl_timerset *timers, void *user)
{
	struct l2tp_cc_cfg cfg;
	char *strs[2] = { NULL, NULL };
	struct l2tp_cc *cc = NULL;
	uint32_t local_ccid, n;

	cc_restore_cfg(&cfg, strs, r);
	local_ccid = usl_unpack_u32(r);
	if (!r->bad)
		cc = l2tp_cc_new(&cfg, ops, timers, local_ccid, user);
	free(strs[0]);
	free(strs[1]);
	if (cc == NULL) {
		r->bad = true;
		return NULL;
	}
	if (!cc_restore_fields(cc, r))
		goto bad;
	cc->state = L2TP_CC_ESTABLISHED;
	cc->dp = L2TP_DP_UP;
	n = usl_unpack_u32(r);
	for (uint32_t i = 0; i < n && !r->bad; i++)
		if (l2tp_sess_restore(cc, r) == NULL)
			goto bad;
	if (r->bad)
		goto bad;
	cc_hello_arm(cc);
	return cc;
bad:
	r->bad = true;
	cc_destroy(cc);	/* no callback: nothing of it reached the daemon or the kernel */
	errno = EINVAL;
	return NULL;
}

void l2tp_cc_discard_restored(struct l2tp_cc *cc)
{
	cc_destroy(cc);
}

/* ------------------------------------------------------------------ */
/* settings changed on a live connection (a reload) */

int l2tp_cc_reconfigure(struct l2tp_cc *cc, const struct l2tp_cc_cfg *cfg)
{
	struct l2tp_cc_cfg c = cc->cfg;

	c.rtx_initial = cfg->rtx_initial;
	c.rtx_cap = cfg->rtx_cap;
	c.max_retries = cfg->max_retries;
	c.ack_delay = cfg->ack_delay;
	c.explicit_ack = cfg->explicit_ack;
	c.hello_interval = cfg->hello_interval;
	c.hello_jitter_pct = cfg->hello_jitter_pct;
	c.sess_setup_timeout = cfg->sess_setup_timeout;
	c.setup_timeout = cfg->setup_timeout;
	c.tx_window_max = cfg->tx_window_max;
	if (!cc_cfg_valid(&c)) {
		errno = EINVAL;
		return -1;
	}
	cc->cfg = c;
	/* the reliable layer: messages already queued keep the budget they had */
	cc->rd.cfg.rtx_initial = c.rtx_initial;
	cc->rd.cfg.rtx_cap = c.rtx_cap;
	cc->rd.cfg.max_retries = c.max_retries;
	cc->rd.cfg.ack_delay = c.ack_delay;
	if (cc->state == L2TP_CC_ESTABLISHED) {
		l2tp_rd_set_peer_window(&cc->rd, cc_tx_window(cc));
		/* the keepalive counts from the last message heard, at the new interval */
		usl_timer_cancel(&cc->timer);
		cc_hello_arm(cc);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* RFC 4951 failover */

const char *l2tp_failover_state_name(enum l2tp_failover_state st)
{
	switch (st) {
	case L2TP_FO_AWAITING_PEER:	return "awaiting-peer";
	case L2TP_FO_RESYNC:		return "resync";
	case L2TP_FO_NONE:
	default:			return "none";
	}
}

enum l2tp_failover_state l2tp_cc_failover_state(const struct l2tp_cc *cc) { return cc->fo; }
uint32_t l2tp_cc_recovery_of(const struct l2tp_cc *cc) { return cc->recovery_of; }

bool l2tp_cc_failover_ok(const struct l2tp_cc *cc)
{
	return cc->cfg.failover && (cc->peer_fo_flags & L2TP_FAILOVER_C);
}

uint16_t l2tp_cc_peer_failover(const struct l2tp_cc *cc, uint32_t *recovery_ms)
{
	if (recovery_ms != NULL)
		*recovery_ms = cc->peer_recovery_ms;
	return cc->peer_fo_flags;
}

void l2tp_cc_remake_dp(struct l2tp_cc *cc)
{
	if (cc->state != L2TP_CC_ESTABLISHED || cc->freed)
		return;
	l2tp_cc_hold(cc);
	l2tp_sess_remake_dp(cc);
	cc->dp = L2TP_DP_NONE;
	cc_dp_create(cc);
	l2tp_cc_release(cc);
}

void l2tp_cc_set_resync(struct l2tp_cc *cc, usl_time deadline)
{
	if (cc->state != L2TP_CC_ESTABLISHED)
		return;
	cc->fo = L2TP_FO_RESYNC;
	l2tp_rd_reset_seq(&cc->rd, 0, 0);
	usl_timer_arm(cc->timers, &cc->timer, deadline);
}

void l2tp_cc_set_recovery_of(struct l2tp_cc *cc, const struct l2tp_cc *old)
{
	uint16_t v[2];

	cc->recovery_of = old->local_ccid;
	/* unguessable, and far from anything of the old connection still in flight */
	l2tp_cc_random(cc, v, sizeof(v));
	cc->scs_ns = v[0];
	cc->scs_nr = v[1];
}

int l2tp_cc_resume(struct l2tp_cc *old, const struct l2tp_cc *rec)
{
	bool initiator = rec->cfg.recover_ccid != 0;

	if (old->freed || old->state != L2TP_CC_ESTABLISHED || rec->state != L2TP_CC_ESTABLISHED ||
	    (initiator ? rec->cfg.recover_ccid : rec->recovery_of) != old->local_ccid ||
	    rec->peer_ccid == 0) {
		errno = EINVAL;
		return -1;
	}
	l2tp_cc_hold(old);
	/* the suggestion is the recovering side's view: Ns is what it sends next */
	if (initiator)
		l2tp_rd_reset_seq(&old->rd, rec->scs_ns, rec->scs_nr);
	else
		l2tp_rd_reset_seq(&old->rd, rec->scs_nr, rec->scs_ns);
	if (old->auth != NULL && rec->auth != NULL)
		l2tp_auth_take_nonces(old->auth, rec->auth);
	old->fo = L2TP_FO_NONE;
	old->last_rx = usl_timerset_now(old->timers);
	usl_timer_cancel(&old->timer);
	cc_hello_arm(old);
	cc_log(info, old, "control channel reset by recovery connection %u (RFC 4951)",
	       rec->local_ccid);
	l2tp_sess_failover_reset(old);
	l2tp_cc_release(old);
	return 0;
}

unsigned l2tp_cc_reconcile(struct l2tp_cc *cc)
{
	unsigned n;

	if (cc->freed || cc->state != L2TP_CC_ESTABLISHED || cc->fo == L2TP_FO_RESYNC)
		return 0;
	l2tp_cc_hold(cc);
	n = l2tp_sess_failover_query(cc);
	l2tp_cc_release(cc);
	return n;
}
