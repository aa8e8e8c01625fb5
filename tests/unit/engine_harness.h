/*
 * tests/unit/engine_harness.h - two protocol engines back to back.
 *
 *        end 0 ("lac")                              end 1 ("lns")
 *   +-------------------+      fake network      +-------------------+
 *   | l2tp_cc (+ sess)  | ---> drop / dup / ---> | l2tp_cc (+ sess)  |
 *   |   ops: fake dp    | <--- delay / reorder <-- |   ops: fake dp    |
 *   +-------------------+                        +-------------------+
 *              \______ one usl_fake_clock, one usl_timerset ______/
 *
 * Every packet an engine sends is logged (decoded with l2tp_msg_decode) and
 * then travels with a latency, unless a test hook or the seeded random loss
 * drops it.  h_run_until() moves virtual time from event to event (the next
 * packet delivery, timer expiry or deferred data plane completion): nothing
 * sleeps.  An SCCRQ with CCID 0 makes the receiving end create a responder
 * cc, as the daemon does.
 */
#ifndef ENGINE_HARNESS_H
#define ENGINE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include "usl/list.h"
#include "usl/time.h"
#include "usl/timer.h"
#include "proto/cc.h"
#include "proto/engine.h"
#include "proto/msg.h"
#include "proto/sess.h"

#define H_MAX_CC	4
#define H_MAX_WIRE	4096
#define H_MAX_EV	1024
#define H_MAX_SESS	512

struct harness;

/* One packet as it left an engine. */
struct h_wire {
	usl_time t;
	int from;
	bool dropped;		/* by the fake network */
	uint16_t type, ns, nr;
	uint32_t ccid;
	size_t len;
	uint8_t *buf;		/* owned by the log */
};

enum h_ev_kind { H_EV_CC, H_EV_SESS };

struct h_event {
	enum h_ev_kind kind;
	usl_time t;
	int end;
	uint32_t id;		/* local CCID or local Session ID */
	int from, to;
	bool has_why;
	uint16_t result, error;
	char text[128];
};

/* How the fake data plane answers a create. */
enum h_dp_mode {
	H_DP_SYNC_OK,		/* *_dp_done(0) from inside create */
	H_DP_DEFER_OK,		/* *_dp_done(0) after dp_delay */
	H_DP_SYNC_FAIL,		/* *_dp_done(-EIO) from inside create */
	H_DP_DEFER_FAIL,	/* *_dp_done(-EIO) after dp_delay */
	H_DP_RETURN_FAIL,	/* create returns -ENOMEM */
};

struct h_end {
	struct harness *h;
	int idx;
	const char *name;
	struct l2tp_cc_cfg cfg;
	char secret[64];
	struct l2tp_cc *cc[H_MAX_CC];
	int n_cc;
	uint32_t next_ccid;
	uint32_t next_sid;

	enum h_dp_mode dp_tunnel, dp_session;
	usl_time dp_delay;
	int dp_tunnel_creates, dp_tunnel_deletes, dp_session_creates, dp_session_deletes;
	int dp_tunnel_live, dp_session_live;
	/* dp_session_prepare: made when dp_prepare, else declined (nothing made) */
	bool dp_prepare;
	int dp_session_prepares;
	struct l2tp_sess *prepared[H_MAX_SESS];	/* prepared, neither created nor deleted */
	int n_prepared;

	/* sessions the "daemon" knows (opened or accepted, not yet freed) */
	struct l2tp_sess *sess[H_MAX_SESS];
	int n_sess;
	int n_freed;
	int n_wen;

	/* what sess_accept does: 0 accept, else CDN result; and settings */
	int accept_result;
	struct l2tp_sess_cfg accept_cfg;	/* cookie_len, l2ss, data_seq copied */
	bool free_on_close;	/* l2tp_cc_free() from inside cc_event(closed) */
	bool free_on_sess_close;	/* l2tp_cc_free() from inside sess_event(closed) */
	bool auto_respond;	/* create a responder cc on SCCRQ (default true) */
	/* a new responder cc that dropped its SCCRQ is freed, as the daemon does */
	int first_drops[L2TP_DROP__COUNT];
};

/* Decides a packet's fate; return true to drop it.  nth counts per sender. */
typedef bool (*h_drop_fn)(struct harness *h, const struct h_wire *w, unsigned nth, void *arg);

struct h_pending;

struct harness {
	struct usl_fake_clock clock;
	struct usl_timerset ts;
	struct h_end end[2];
	struct usl_list net;		/* packets in flight, by delivery time */
	struct usl_list dp;		/* deferred dp completions */
	usl_time latency;
	uint64_t prng;
	unsigned loss_pct, dup_pct, reorder_pct;
	h_drop_fn drop;
	void *drop_arg;
	unsigned nth[2];

	struct h_wire wire[H_MAX_WIRE];
	int n_wire;
	struct h_event ev[H_MAX_EV];
	int n_ev;
};

/* Fresh harness at virtual time 1000 s; both ends with default configs. */
struct harness *h_new(uint64_t seed);
void h_free(struct harness *h);

static inline usl_time h_now(const struct harness *h) { return h->clock.now; }
/* Seconds since h_new() as a double, for messages. */
double h_secs(const struct harness *h, usl_time t);
static inline usl_time h_at(usl_time start, int64_t ms) { return usl_time_add(start, usl_time_ms(ms)); }

/* Creates (once) the initiator cc of end e and sends the SCCRQ. */
struct l2tp_cc *h_connect(struct harness *h, int e);
/* The end's first (or only) cc. */
static inline struct l2tp_cc *h_cc(struct harness *h, int e)
{
	return h->end[e].n_cc > 0 ? h->end[e].cc[0] : NULL;
}

/* Advances virtual time event by event until cond() or max_time passes. */
typedef bool (*h_cond_fn)(struct harness *h, void *arg);
bool h_run_until(struct harness *h, h_cond_fn cond, void *arg, usl_time max_time);
/* Runs for exactly d of virtual time. */
void h_run_for(struct harness *h, usl_time d);

/* Conditions. */
bool h_cond_both_established(struct harness *h, void *arg);
bool h_cond_both_closed(struct harness *h, void *arg);
struct h_sess_cond { struct l2tp_sess **s; enum l2tp_sess_state state; int n; };

/* Wire log queries. */
int h_count(const struct harness *h, int from, uint16_t type);	/* from -1: either */
const struct h_wire *h_find(const struct harness *h, int from, uint16_t type, int nth);
/* Decodes a logged packet (no secret needed unless hidden AVPs). */
void h_decode(const struct h_wire *w, struct l2tp_msg *m);
/* Events. */
const struct h_event *h_last_cc_event(const struct harness *h, int end, int to);
const struct h_event *h_last_sess_event(const struct harness *h, int end, uint32_t sid, int to);
int h_count_cc_events(const struct harness *h, int end, int to);

/* Enables Control Message Authentication on one end. */
void h_set_auth(struct harness *h, int e, const char *secret, enum l2tp_digest_type type);

/* Opens a session from end e on its first cc. */
struct l2tp_sess *h_open(struct harness *h, int e, uint16_t pw, uint8_t cookie_len,
			 bool outgoing, const char *end_id);
/* The same with a whole session config (tracked like h_open's). */
struct l2tp_sess *h_open_cfg(struct harness *h, int i, const struct l2tp_sess_cfg *cfg);
/* The session of end e with this peer Session ID, or NULL. */
struct l2tp_sess *h_peer_of(struct harness *h, int e, const struct l2tp_sess *other);

/*
 * Sends m from end e's first cc through its reliable layer (so Ns/Nr are
 * right), optionally with one extra AVP appended: the way to make a peer
 * misbehave.  extra_type 0: none.
 */
void h_send_msg(struct harness *h, int e, struct l2tp_msg *m, uint16_t extra_vendor,
		uint16_t extra_type, bool extra_m);
/* Sends hand-made bytes (header first) through end e's reliable layer. */
void h_send_raw(struct harness *h, int e, uint8_t *buf, size_t len);
/* Puts raw bytes on the wire towards end `to` (arrives after the latency). */
void h_inject_raw(struct harness *h, int to, const uint8_t *buf, size_t len);

void h_dump(const struct harness *h);	/* the wire log on stderr, for failures */

#endif
