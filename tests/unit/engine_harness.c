/*
 * tests/unit/engine_harness.c - two engines back to back over a fake
 * network and a fake clock.  See engine_harness.h.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "usl/log.h"
#include "engine_harness.h"

struct h_pkt {
	struct usl_list link;
	usl_time at;
	int to;
	size_t len;
	uint8_t buf[];
};

struct h_pending {
	struct usl_list link;
	usl_time at;
	struct l2tp_cc *cc;		/* tunnel completion, or */
	struct l2tp_sess *s;		/* session completion */
	int err;
};

static const usl_time H_START = { 1000000000000LL };

static uint64_t h_rand(struct harness *h)
{
	uint64_t z = (h->prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool h_chance(struct harness *h, unsigned pct)
{
	return pct > 0 && h_rand(h) % 100 < pct;
}

double h_secs(const struct harness *h, usl_time t)
{
	return (double)(t.ns - H_START.ns) / 1e9;
}

static struct h_end *h_end_of(struct l2tp_cc *cc)
{
	return l2tp_cc_user(cc);
}

/* ------------------------------------------------------------------ */
/* the fake network */

static void h_enqueue(struct harness *h, int to, const uint8_t *buf, size_t len, usl_time at)
{
	struct h_pkt *p = malloc(sizeof(*p) + len), *q;
	struct usl_list *pos;

	ck_assert_ptr_nonnull(p);
	p->at = at;
	p->to = to;
	p->len = len;
	memcpy(p->buf, buf, len);
	usl_list_foreach(pos, &h->net) {
		q = usl_list_entry(pos, struct h_pkt, link);
		if (usl_time_cmp(q->at, at) > 0)
			break;
	}
	usl_list_add_tail(pos, &p->link);
}

static int h_send(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	struct h_end *e = h_end_of(cc);
	struct harness *h = e->h;
	struct h_wire *w;
	struct l2tp_msg m;
	usl_time at;

	ck_assert_int_lt(h->n_wire, H_MAX_WIRE);
	w = &h->wire[h->n_wire++];
	memset(w, 0, sizeof(*w));
	w->t = h_now(h);
	w->from = e->idx;
	w->len = len;
	w->buf = malloc(len);
	ck_assert_ptr_nonnull(w->buf);
	memcpy(w->buf, buf, len);
	ck_assert_int_eq(l2tp_msg_decode_header(&m, buf, len, false), L2TP_DROP_NONE);
	w->ccid = m.ccid;
	w->ns = m.ns;
	w->nr = m.nr;
	/* what we send decodes; only a test's deliberately odd message may not */
	w->type = l2tp_msg_decode(&m, buf, len, false, NULL) == L2TP_DROP_NONE ? m.type : 0xffff;
	if ((h->drop && h->drop(h, w, h->nth[e->idx]++, h->drop_arg)) ||
	    h_chance(h, h->loss_pct)) {
		w->dropped = true;
		return 0;
	}
	at = usl_time_add(h_now(h), h->latency);
	if (h_chance(h, h->reorder_pct))
		at = usl_time_add(at, usl_time_ms((int64_t)(h_rand(h) % 300)));
	h_enqueue(h, !e->idx, buf, len, at);
	if (h_chance(h, h->dup_pct))
		h_enqueue(h, !e->idx, buf, len, usl_time_add(at, usl_time_ms(5)));
	return 0;
}

void h_decode(const struct h_wire *w, struct l2tp_msg *m)
{
	enum l2tp_drop r = l2tp_msg_decode(m, w->buf, w->len, false, NULL);

	ck_assert_msg(r == L2TP_DROP_NONE, "cannot decode a packet we sent: %s",
		      l2tp_drop_name(r));
}

/* ------------------------------------------------------------------ */
/* fake daemon ops */

static void h_record(struct harness *h, enum h_ev_kind kind, int end, uint32_t id,
		     int from, int to, const struct l2tp_result *why)
{
	struct h_event *ev;
	size_t n;

	ck_assert_int_lt(h->n_ev, H_MAX_EV);
	ev = &h->ev[h->n_ev++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->t = h_now(h);
	ev->end = end;
	ev->id = id;
	ev->from = from;
	ev->to = to;
	if (why != NULL) {
		ev->has_why = true;
		ev->result = why->result;
		ev->error = why->error;
		n = why->message.len < sizeof(ev->text) - 1 ? why->message.len : sizeof(ev->text) - 1;
		if (n)
			memcpy(ev->text, why->message.p, n);
	}
}

static void h_cc_event(struct l2tp_cc *cc, enum l2tp_cc_state from, enum l2tp_cc_state to,
		       const struct l2tp_result *why)
{
	struct h_end *e = h_end_of(cc);
	int i;

	h_record(e->h, H_EV_CC, e->idx, l2tp_cc_local_ccid(cc), from, to, why);
	if (to == L2TP_CC_CLOSED && e->free_on_close) {
		for (i = 0; i < e->n_cc; i++)
			if (e->cc[i] == cc)
				e->cc[i] = e->cc[--e->n_cc];
		l2tp_cc_free(cc);
	}
}

static void h_add_pending(struct harness *h, struct l2tp_cc *cc, struct l2tp_sess *s, int err)
{
	struct h_pending *p = calloc(1, sizeof(*p));
	struct h_end *e = h_end_of(cc);

	ck_assert_ptr_nonnull(p);
	p->at = usl_time_add(h_now(h), e->dp_delay);
	p->cc = s ? NULL : cc;
	p->s = s;
	p->err = err;
	usl_list_add_tail(&h->dp, &p->link);
}

static void h_cancel_pending(struct harness *h, struct l2tp_cc *cc, struct l2tp_sess *s)
{
	struct usl_list *pos, *tmp;
	struct h_pending *p;

	usl_list_foreach_safe(pos, tmp, &h->dp) {
		p = usl_list_entry(pos, struct h_pending, link);
		if ((s && p->s == s) || (!s && p->cc == cc)) {
			usl_list_del(pos);
			free(p);
		}
	}
}

/* Shared by tunnel and session: returns what create returns. */
static int h_dp_create(struct h_end *e, enum h_dp_mode mode, struct l2tp_cc *cc,
		       struct l2tp_sess *s, int *live)
{
	switch (mode) {
	case H_DP_SYNC_OK:
		(*live)++;
		if (s)
			l2tp_sess_dp_done(s, 0);
		else
			l2tp_cc_dp_done(cc, 0);
		return 0;
	case H_DP_SYNC_FAIL:
		if (s)
			l2tp_sess_dp_done(s, -EIO);
		else
			l2tp_cc_dp_done(cc, -EIO);
		return 0;
	case H_DP_DEFER_OK:
		(*live)++;
		h_add_pending(e->h, cc, s, 0);
		return 0;
	case H_DP_DEFER_FAIL:
		h_add_pending(e->h, cc, s, -EIO);
		return 0;
	case H_DP_RETURN_FAIL:
	default:
		return -ENOMEM;
	}
}

static int h_dp_tunnel_create(struct l2tp_cc *cc)
{
	struct h_end *e = h_end_of(cc);

	e->dp_tunnel_creates++;
	return h_dp_create(e, e->dp_tunnel, cc, NULL, &e->dp_tunnel_live);
}

static void h_dp_tunnel_delete(struct l2tp_cc *cc)
{
	struct h_end *e = h_end_of(cc);

	e->dp_tunnel_deletes++;
	h_cancel_pending(e->h, cc, NULL);
	if (e->dp_tunnel == H_DP_SYNC_OK || e->dp_tunnel == H_DP_DEFER_OK)
		e->dp_tunnel_live--;
}

/* Takes s off the prepared list; whether it was on it. */
static bool h_unprepare(struct h_end *e, const struct l2tp_sess *s)
{
	for (int i = 0; i < e->n_prepared; i++) {
		if (e->prepared[i] == s) {
			e->prepared[i] = e->prepared[--e->n_prepared];
			return true;
		}
	}
	return false;
}

static int h_dp_session_prepare(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	struct h_end *e = h_end_of(cc);

	ck_assert_int_eq(l2tp_cc_dp_state(cc), L2TP_DP_UP);
	ck_assert_int_eq(l2tp_sess_state(s), L2TP_SESS_WAIT_CONNECT);
	ck_assert_int_eq(l2tp_sess_dp_state(s), L2TP_DP_NONE);
	if (!e->dp_prepare)
		return -EOPNOTSUPP;
	ck_assert_int_lt(e->n_prepared, H_MAX_SESS);
	e->dp_session_prepares++;
	e->prepared[e->n_prepared++] = s;
	return 0;
}

static int h_dp_session_create(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	struct h_end *e = h_end_of(cc);

	ck_assert_int_eq(l2tp_cc_dp_state(cc), L2TP_DP_UP);
	e->dp_session_creates++;
	h_unprepare(e, s);	/* the create takes over what was prepared */
	return h_dp_create(e, e->dp_session, cc, s, &e->dp_session_live);
}

static void h_dp_session_delete(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	struct h_end *e = h_end_of(cc);

	e->dp_session_deletes++;
	if (h_unprepare(e, s))
		return;		/* prepared, never created */
	h_cancel_pending(e->h, cc, s);
	if (e->dp_session == H_DP_SYNC_OK || e->dp_session == H_DP_DEFER_OK)
		e->dp_session_live--;
}

static uint32_t h_alloc_sid(struct l2tp_cc *cc)
{
	struct h_end *e = h_end_of(cc);

	return e->next_sid++;
}

static void h_track(struct h_end *e, struct l2tp_sess *s)
{
	int i;

	for (i = 0; i < e->n_sess; i++)
		if (e->sess[i] == s)
			return;
	ck_assert_int_lt(e->n_sess, H_MAX_SESS);
	e->sess[e->n_sess++] = s;
}

static int h_sess_accept(struct l2tp_cc *cc, struct l2tp_sess *s, const struct l2tp_msg *req,
			 struct l2tp_sess_cfg *out)
{
	struct h_end *e = h_end_of(cc);

	h_track(e, s);
	if (e->accept_result)
		return e->accept_result;
	out->cookie_len = e->accept_cfg.cookie_len;
	out->l2ss = e->accept_cfg.l2ss;
	out->data_seq = e->accept_cfg.data_seq;
	return 0;
}

static void h_sess_event(struct l2tp_cc *cc, struct l2tp_sess *s, enum l2tp_sess_state from,
			 enum l2tp_sess_state to, const struct l2tp_result *why)
{
	struct h_end *e = h_end_of(cc);

	int i;

	h_track(e, s);
	h_record(e->h, H_EV_SESS, e->idx, l2tp_sess_local_sid(s), from, to, why);
	if (to == L2TP_SESS_CLOSED && e->free_on_sess_close) {
		e->free_on_sess_close = false;
		for (i = 0; i < e->n_cc; i++)
			if (e->cc[i] == cc)
				e->cc[i] = e->cc[--e->n_cc];
		l2tp_cc_free(cc);
	}
}

static void h_sess_freed(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	struct h_end *e = h_end_of(cc);
	int i;

	h_cancel_pending(e->h, cc, s);
	e->n_freed++;
	for (i = 0; i < e->n_sess; i++)
		if (e->sess[i] == s) {
			e->sess[i] = e->sess[--e->n_sess];
			return;
		}
}

static void h_sess_wen(struct l2tp_cc *cc, struct l2tp_sess *s, const struct l2tp_msg *m)
{
	h_end_of(cc)->n_wen++;
}

static void h_random(struct l2tp_cc *cc, void *buf, size_t len)
{
	struct harness *h = h_end_of(cc)->h;
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)h_rand(h);
}

static const struct l2tp_cc_ops h_ops = {
	.send = h_send,
	.cc_event = h_cc_event,
	.dp_tunnel_create = h_dp_tunnel_create,
	.dp_tunnel_delete = h_dp_tunnel_delete,
	.alloc_session_id = h_alloc_sid,
	.sess_accept = h_sess_accept,
	.dp_session_create = h_dp_session_create,
	.dp_session_delete = h_dp_session_delete,
	.dp_session_prepare = h_dp_session_prepare,
	.sess_event = h_sess_event,
	.sess_freed = h_sess_freed,
	.sess_wen = h_sess_wen,
	.random = h_random,
};

/* ------------------------------------------------------------------ */
/* set-up */

static void h_end_init(struct harness *h, int i)
{
	struct h_end *e = &h->end[i];

	e->h = h;
	e->idx = i;
	e->name = i == 0 ? "lac" : "lns";
	l2tp_cc_cfg_init(&e->cfg);
	e->cfg.host_name = e->name;
	e->cfg.router_id = i == 0 ? 0x0a000001 : 0x0a000002;
	e->cfg.hello_jitter_pct = 0;
	e->cfg.seed = 1 + (uint64_t)i;
	e->next_ccid = i == 0 ? 100 : 200;
	e->next_sid = i == 0 ? 0x1000 : 0x2000;
	e->dp_tunnel = H_DP_SYNC_OK;
	e->dp_session = H_DP_SYNC_OK;
	e->dp_delay = usl_time_ms(20);
	e->auto_respond = true;
}

static void h_quiet_sink(enum log_level lvl, const char *msg, void *arg)
{
	if (getenv("H_VERBOSE"))
		fprintf(stderr, "log: %s\n", msg);
}

struct harness *h_new(uint64_t seed)
{
	struct harness *h = calloc(1, sizeof(*h));

	ck_assert_ptr_nonnull(h);
	log_set_sink(h_quiet_sink, NULL);
	log_set_level(LOG_LVL_DEBUG);
	usl_fake_clock_init(&h->clock, H_START);
	usl_timerset_init(&h->ts, &h->clock.clock);
	usl_list_init(&h->net);
	usl_list_init(&h->dp);
	h->latency = usl_time_ms(10);
	h->prng = seed;
	h_end_init(h, 0);
	h_end_init(h, 1);
	return h;
}

void h_free(struct harness *h)
{
	struct usl_list *pos, *tmp;
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < h->end[i].n_cc; j++)
			l2tp_cc_free(h->end[i].cc[j]);
	usl_list_foreach_safe(pos, tmp, &h->net) {
		usl_list_del(pos);
		free(usl_list_entry(pos, struct h_pkt, link));
	}
	usl_list_foreach_safe(pos, tmp, &h->dp) {
		usl_list_del(pos);
		free(usl_list_entry(pos, struct h_pending, link));
	}
	for (i = 0; i < h->n_wire; i++)
		free(h->wire[i].buf);
	ck_assert_int_eq(usl_timerset_count(&h->ts), 0);
	log_set_sink(NULL, NULL);
	free(h);
}

static struct l2tp_cc *h_new_cc(struct harness *h, int i)
{
	struct h_end *e = &h->end[i];
	struct l2tp_cc *cc;

	ck_assert_int_lt(e->n_cc, H_MAX_CC);
	if (e->secret[0])
		e->cfg.secret = (const uint8_t *)e->secret;
	cc = l2tp_cc_new(&e->cfg, &h_ops, &h->ts, e->next_ccid++, e);
	ck_assert_ptr_nonnull(cc);
	e->cc[e->n_cc++] = cc;
	return cc;
}

struct l2tp_cc *h_connect(struct harness *h, int i)
{
	struct l2tp_cc *cc = h_new_cc(h, i);

	ck_assert_int_eq(l2tp_cc_connect(cc), 0);
	return cc;
}

void h_set_auth(struct harness *h, int i, const char *secret, enum l2tp_digest_type type)
{
	struct h_end *e = &h->end[i];

	snprintf(e->secret, sizeof(e->secret), "%s", secret);
	e->cfg.auth_enabled = true;
	e->cfg.secret = (const uint8_t *)e->secret;
	e->cfg.secret_len = strlen(secret);
	e->cfg.digest_type = type;
}

/* ------------------------------------------------------------------ */
/* delivery */

/* A responder cc whose SCCRQ was dropped (bad digest...) is of no use: free it. */
static void h_first_input(struct h_end *e, struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	enum l2tp_drop r = l2tp_cc_input(cc, buf, len);

	if (r == L2TP_DROP_NONE || l2tp_cc_state(cc) != L2TP_CC_IDLE)
		return;
	e->first_drops[r]++;
	ck_assert_ptr_eq(e->cc[e->n_cc - 1], cc);
	e->n_cc--;
	l2tp_cc_free(cc);
}

/*
 * Crossed SCCRQs, as the daemon resolves them (RFC 3931 5.4.3): the end's
 * own cc waiting for a reply decides with l2tp_cc_tie_break().
 */
static void h_new_sccrq(struct harness *h, struct h_end *e, const uint8_t *buf, size_t len)
{
	struct l2tp_cc *ours = NULL, *cc;
	struct l2tp_msg m;
	enum l2tp_tie t = L2TP_TIE_NONE;
	int i;

	if (l2tp_msg_decode(&m, buf, len, false, NULL) != L2TP_DROP_NONE)
		return;
	/* a retransmitted SCCRQ belongs to the cc it created */
	for (i = 0; i < e->n_cc; i++) {
		if (!l2tp_cc_is_initiator(e->cc[i]) &&
		    l2tp_cc_peer_ccid(e->cc[i]) == m.assigned_ccid) {
			l2tp_cc_input(e->cc[i], buf, len);
			return;
		}
		if (l2tp_cc_state(e->cc[i]) == L2TP_CC_WAIT_CTL_REPLY)
			ours = e->cc[i];
	}
	if (!e->auto_respond)
		return;
	if (ours != NULL)
		t = l2tp_cc_tie_break(ours, &m);
	switch (t) {
	case L2TP_TIE_WE_WIN:
		cc = h_new_cc(h, e->idx);
		l2tp_cc_input_refuse(cc, buf, len, L2TP_STOPCCN_ALREADY_EXISTS, 0,
				     "lost tie breaker");
		return;
	case L2TP_TIE_WE_LOSE:
		l2tp_cc_discard(ours, L2TP_STOPCCN_ALREADY_EXISTS, "lost tie breaker");
		break;
	case L2TP_TIE_RESTART:
		l2tp_cc_discard(ours, L2TP_STOPCCN_ALREADY_EXISTS, "equal tie breakers");
		return;
	case L2TP_TIE_NONE:
	default:
		break;
	}
	cc = h_new_cc(h, e->idx);
	h_first_input(e, cc, buf, len);
}

static void h_deliver(struct harness *h, struct h_pkt *p)
{
	struct h_end *e = &h->end[p->to];
	uint32_t ccid;
	int i;

	if (p->len < L2TP_CTRL_HDR_LEN)
		return;
	ccid = usl_get_be32(p->buf + 4);
	if (ccid == 0) {
		h_new_sccrq(h, e, p->buf, p->len);
		return;
	}
	for (i = 0; i < e->n_cc; i++)
		if (l2tp_cc_local_ccid(e->cc[i]) == ccid) {
			l2tp_cc_input(e->cc[i], p->buf, p->len);
			return;
		}
}

static usl_time h_next_event(struct harness *h)
{
	usl_time t = usl_timerset_next(&h->ts);
	struct h_pkt *p;
	struct h_pending *d;
	struct usl_list *pos;

	if (!usl_list_empty(&h->net)) {
		p = usl_list_first_entry(&h->net, struct h_pkt, link);
		if (usl_time_cmp(p->at, t) < 0)
			t = p->at;
	}
	usl_list_foreach(pos, &h->dp) {
		d = usl_list_entry(pos, struct h_pending, link);
		if (usl_time_cmp(d->at, t) < 0)
			t = d->at;
	}
	return t;
}

/* Everything due now: packets, dp completions, timers. */
static void h_step(struct harness *h)
{
	struct h_pkt *p;
	struct h_pending *d;
	struct usl_list *pos;
	bool again = true;

	while (again) {
		again = false;
		if (!usl_list_empty(&h->net)) {
			p = usl_list_first_entry(&h->net, struct h_pkt, link);
			if (usl_time_cmp(p->at, h_now(h)) <= 0) {
				usl_list_del(&p->link);
				h_deliver(h, p);
				free(p);
				again = true;
				continue;
			}
		}
		usl_list_foreach(pos, &h->dp) {
			d = usl_list_entry(pos, struct h_pending, link);
			if (usl_time_cmp(d->at, h_now(h)) <= 0) {
				usl_list_del(pos);
				if (d->s)
					l2tp_sess_dp_done(d->s, d->err);
				else
					l2tp_cc_dp_done(d->cc, d->err);
				free(d);
				again = true;
				break;
			}
		}
		if (usl_timerset_run(&h->ts) > 0)
			again = true;
	}
}

bool h_run_until(struct harness *h, h_cond_fn cond, void *arg, usl_time max_time)
{
	usl_time deadline = usl_time_add(h_now(h), max_time), next;

	for (;;) {
		h_step(h);
		if (cond != NULL && cond(h, arg))
			return true;
		next = h_next_event(h);
		if (usl_time_cmp(next, deadline) > 0) {
			h->clock.now = deadline;
			h_step(h);
			return cond != NULL && cond(h, arg);
		}
		h->clock.now = next;
	}
}

void h_run_for(struct harness *h, usl_time d)
{
	h_run_until(h, NULL, NULL, d);
}

/* ------------------------------------------------------------------ */
/* queries */

bool h_cond_both_established(struct harness *h, void *arg)
{
	return h_cc(h, 0) && h_cc(h, 1) &&
	       l2tp_cc_state(h_cc(h, 0)) == L2TP_CC_ESTABLISHED &&
	       l2tp_cc_state(h_cc(h, 1)) == L2TP_CC_ESTABLISHED &&
	       l2tp_cc_dp_state(h_cc(h, 0)) == L2TP_DP_UP &&
	       l2tp_cc_dp_state(h_cc(h, 1)) == L2TP_DP_UP;
}

bool h_cond_both_closed(struct harness *h, void *arg)
{
	return h_cc(h, 0) && h_cc(h, 1) &&
	       l2tp_cc_state(h_cc(h, 0)) == L2TP_CC_CLOSED &&
	       l2tp_cc_state(h_cc(h, 1)) == L2TP_CC_CLOSED;
}

int h_count(const struct harness *h, int from, uint16_t type)
{
	int i, n = 0;

	for (i = 0; i < h->n_wire; i++)
		if ((from < 0 || h->wire[i].from == from) && h->wire[i].type == type)
			n++;
	return n;
}

const struct h_wire *h_find(const struct harness *h, int from, uint16_t type, int nth)
{
	int i;

	for (i = 0; i < h->n_wire; i++)
		if ((from < 0 || h->wire[i].from == from) && h->wire[i].type == type &&
		    nth-- == 0)
			return &h->wire[i];
	return NULL;
}

const struct h_event *h_last_cc_event(const struct harness *h, int end, int to)
{
	int i;

	for (i = h->n_ev - 1; i >= 0; i--)
		if (h->ev[i].kind == H_EV_CC && h->ev[i].end == end && h->ev[i].to == to)
			return &h->ev[i];
	return NULL;
}

int h_count_cc_events(const struct harness *h, int end, int to)
{
	int i, n = 0;

	for (i = 0; i < h->n_ev; i++)
		if (h->ev[i].kind == H_EV_CC && h->ev[i].end == end && h->ev[i].to == to)
			n++;
	return n;
}

const struct h_event *h_last_sess_event(const struct harness *h, int end, uint32_t sid, int to)
{
	int i;

	for (i = h->n_ev - 1; i >= 0; i--)
		if (h->ev[i].kind == H_EV_SESS && h->ev[i].end == end &&
		    (sid == 0 || h->ev[i].id == sid) && h->ev[i].to == to)
			return &h->ev[i];
	return NULL;
}

struct l2tp_sess *h_open(struct harness *h, int i, uint16_t pw, uint8_t cookie_len,
			 bool outgoing, const char *end_id)
{
	struct l2tp_sess_cfg cfg;
	struct l2tp_sess *s;

	l2tp_sess_cfg_init(&cfg);
	cfg.pw_type = pw;
	cfg.cookie_len = cookie_len;
	cfg.outgoing = outgoing;
	cfg.remote_end_id = (const uint8_t *)end_id;
	cfg.remote_end_id_len = (uint16_t)strlen(end_id);
	s = l2tp_sess_open(h_cc(h, i), &cfg, NULL);
	if (s != NULL)
		h_track(&h->end[i], s);
	return s;
}

struct l2tp_sess *h_open_cfg(struct harness *h, int i, const struct l2tp_sess_cfg *cfg)
{
	struct l2tp_sess *s = l2tp_sess_open(h_cc(h, i), cfg, NULL);

	if (s != NULL)
		h_track(&h->end[i], s);
	return s;
}

struct l2tp_sess *h_peer_of(struct harness *h, int i, const struct l2tp_sess *other)
{
	struct h_end *e = &h->end[i];
	int k;

	for (k = 0; k < e->n_sess; k++)
		if (l2tp_sess_remote_sid(e->sess[k]) == l2tp_sess_local_sid(other) &&
		    l2tp_sess_local_sid(e->sess[k]) == l2tp_sess_remote_sid(other))
			return e->sess[k];
	return NULL;
}

void h_send_msg(struct harness *h, int e, struct l2tp_msg *m, uint16_t extra_vendor,
		uint16_t extra_type, bool extra_m)
{
	struct l2tp_cc *cc = h_cc(h, e);
	uint8_t buf[L2TP_MAX_MSG];
	int len;

	m->ver = 3;
	m->ccid = l2tp_cc_peer_ccid(cc);
	len = l2tp_msg_encode(m, buf, sizeof(buf), false, 0, NULL);
	ck_assert_int_gt(len, 0);
	if (extra_type != 0) {
		/* a 2-octet value: the AVP is 8 octets */
		usl_put_be16(buf + len, (uint16_t)((extra_m ? L2TP_AVP_F_M : 0) | 8));
		usl_put_be16(buf + len + 2, extra_vendor);
		usl_put_be16(buf + len + 4, extra_type);
		usl_put_be16(buf + len + 6, 0x1234);
		len += 8;
		usl_put_be16(buf + 2, (uint16_t)len);
	}
	ck_assert_int_eq(l2tp_rd_send(&cc->rd, buf, (size_t)len, m->type, 0), 0);
}

void h_send_raw(struct harness *h, int e, uint8_t *buf, size_t len)
{
	struct l2tp_cc *cc = h_cc(h, e);

	usl_put_be32(buf + 4, l2tp_cc_peer_ccid(cc));
	ck_assert_int_eq(l2tp_rd_send(&cc->rd, buf, len, 0xffff, 0), 0);
}

void h_inject_raw(struct harness *h, int to, const uint8_t *buf, size_t len)
{
	h_enqueue(h, to, buf, len, usl_time_add(h_now(h), h->latency));
}

void h_dump(const struct harness *h)
{
	int i;

	for (i = 0; i < h->n_wire; i++)
		fprintf(stderr, "%9.3f %s -> %-7s ccid %u ns %u nr %u%s\n",
			h_secs(h, h->wire[i].t), h->end[h->wire[i].from].name,
			l2tp_msg_type_name(h->wire[i].type), h->wire[i].ccid,
			h->wire[i].ns, h->wire[i].nr, h->wire[i].dropped ? " (dropped)" : "");
}
