/*
 * src/inspect/conn.h - what conn.c, seq.c and state.c share: a control
 * connection as followed through a capture.  Private to src/inspect.
 */
#ifndef L2TP_INSPECT_CONN_H
#define L2TP_INSPECT_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "usl/hash.h"
#include "inspect.h"

/*
 * Sequenced messages remembered per side, to recognise their copies: more
 * than most peers' windows hold in flight, small enough for captures of
 * thousands of connections.
 */
#define RING		128
#define SEC		1000000000LL
#define GRACE_NS	SEC		/* an ACK may still be on its way at the end */
#define SLACK_NS	(SEC / 50)	/* timer granularity and scheduling */
#define CAP_NS		(SEC * 15 / 2)	/* 4.2: a backoff cap SHOULD be >= 8 s */
#define MAX_SCAN	10000		/* connections searched for a stray message */

enum cstate { CS_UNKNOWN, CS_WAIT_REPLY, CS_WAIT_CONN, CS_ESTABLISHED, CS_CLOSING };
enum sstate { SS_WAIT_REPLY, SS_WAIT_CONNECT, SS_ESTABLISHED, SS_CLOSED };

/* One sequenced message a side sent, and its copies. */
struct sent {
	struct insp_rec *waiting;	/* last retransmitted copy, until acknowledged */
	int64_t t_last, gap_last;	/* last copy; interval before it */
	int64_t gap_prev;		/* the interval before gap_last */
	unsigned frame;			/* of the first copy */
	uint16_t ns, type, copies;
	bool used;
	bool head;			/* its first timeout ran from its own sending */
	bool backoff_flagged;
};

struct side {
	struct usl_hnode node;		/* in ccids, once ccid_known */
	struct conn *conn;
	struct insp_addr addr;
	uint32_t ccid;			/* its Assigned CCID: the other side's header CCID */
	bool ccid_known;
	bool seq_known;			/* next_ns is meaningful */
	bool synced;			/* ... and no Ns before it is unaccounted for */
	uint16_t next_ns;
	bool nr_seen;
	uint16_t max_nr;		/* how far it acknowledged the other side */
	bool stopped;			/* it sent a StopCCN: it takes no more messages */
	uint16_t stop_nr;		/* ... from this Ns of the other side on */
	unsigned n_waiting;
	struct sent ring[RING];
	uint8_t nonce[L2TP_NONCE_MAX];
	uint8_t nonce_len;
	bool has_nonce;
	bool sent_sccrx;
	uint16_t pw_caps[L2TP_MAX_PW_CAPS];
	uint8_t n_pw_caps;
	bool caps_seen;
	char host[96];			/* JSON-escaped Host Name */
	unsigned n_msgs, n_zlb, n_ack, n_rtx;
};

struct sess {
	struct sess *next;
	uint32_t sid[2];		/* each side's Local Session ID, 0 until known */
	int init;			/* side that sent the ICRQ/OCRQ */
	uint16_t req;
	enum sstate state;
};

struct conn {
	unsigned id;
	bool from_start;		/* its SCCRQ is in the capture: state checks apply */
	bool over_ip;
	bool auth;			/* a nonce in SCCRQ/SCCRP (4.3) */
	bool sccrq_seen, sccrp_seen;
	bool loose;			/* directions may not all land here: find_conn() */
	enum cstate state;
	int stop_side;			/* -1, or the side that sent the first StopCCN */
	uint16_t stop_ns;
	unsigned n_sessions;
	struct sess *sessions;
	struct side side[2];
};

/* Sequence numbers modulo 2^16 (4.2). */
static inline bool seq_before(uint16_t a, uint16_t b)
{
	return a != b && (uint16_t)(b - a) < 0x8000;
}

static inline bool seq_after(uint16_t a, uint16_t b)
{
	return seq_before(b, a);
}

/* conn.c */
int insp_side_index(const struct side *s);
void insp_side_set_ccid(struct side *s, uint32_t ccid);

/* seq.c: reliable delivery (4.2) */
void insp_seq_nr(struct conn *c, int s, struct insp_rec *r, uint16_t nr);
bool insp_seq_ns(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		 uint16_t ns, uint16_t type, bool is_ack);
void insp_seq_finish(struct side *S, const struct side *R, int64_t end);
void insp_seq_closed_by(struct conn *c, int s, uint16_t nr);

/* state.c: state machines (7.2 - 7.4), authentication (4.3) */
const char *insp_cstate_name(enum cstate st);
bool insp_session_msg(uint16_t type);
void insp_state_handshake(struct conn *c, int s, const struct l2tp_msg *m);
void insp_state_track(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m);
void insp_state_stopccn(struct conn *c, int s, struct insp_rec *r, const struct l2tp_msg *m);
bool insp_state_digest(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		       const struct l2tp_msg *m, const struct insp_opts *o);

#endif
