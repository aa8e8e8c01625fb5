/*
 * tests/fuzz/fuzz_engine.c - libFuzzer target for the whole protocol engine:
 * one control connection with its sessions (cc, sess, rd, codec and auth
 * together), driven by a script of datagrams, clock steps and local
 * operations, on a fake clock.
 *
 * Input: one configuration octet, then records until the input ends:
 *
 *   0x00 L1 L0 bytes...   a datagram of length L (big endian, at most 4,200)
 *   0x01 L1 L0 bytes...   the same, with its header fixed up first: our
 *                         CCID (0 while idle), Ns = what we expect next, Nr = all we sent
 *                         (so that deep states are reachable by mutation)
 *   0x02 T                the clock moves T * 50 ms; due timers run
 *   0x03 OP               a local operation (connect, close, open/close a
 *                         session, complete a pending data plane request,
 *                         circuit status)
 *   0x04 L1 L0 bytes...   as 0x01, then signed as the peer would (RFC 3931
 *                         4.3: the fuzz secret, both nonces seen so far) when
 *                         Message Digest AVPs follow the Message Type, so
 *                         authenticated connections get past the digest
 *                         check too
 *   other                 ends the script
 *
 * Configuration octet: bit 0 we initiate (else we are the responder fed an
 * SCCRQ), bit 1 authentication, bit 2 explicit ACK messages, bit 3 hidden
 * AVPs, bits 4-5 receive window (4, 16, 1024, 65535), bit 6 no delayed ACK,
 * bit 7 tie breaker.
 *
 * Oracles, each an abort(): everything the engine sends must decode with
 * our own decoder (a message we cannot read ourselves is a bug); a
 * connection outside established must always have a deadline armed
 * (l2tp_cc_has_deadline: the daemon's invariant); no sanitizer report; no
 * leak once the connection is freed.  FUZZ_ENGINE_TRACE=1 in the
 * environment prints what each datagram did (for writing seeds).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "usl/log.h"
#include "usl/time.h"
#include "usl/timer.h"
#include "proto/auth.h"
#include "proto/cc.h"
#include "proto/engine.h"
#include "proto/msg.h"
#include "proto/sess.h"

#define FUZZ_SECRET	"fuzz-secret"
#define LOCAL_CCID	0x11223344u
#define MAX_SESS	16
#define MAX_DGRAM	4200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	struct usl_fake_clock clock;
	struct usl_timerset ts;
	struct l2tp_cc *cc;
	uint64_t prng;
	uint32_t next_sid;
	bool dp_tunnel_pending;
	struct l2tp_sess *sess[MAX_SESS];	/* sessions alive, for local operations */
	bool sess_dp_pending[MAX_SESS];
	unsigned sent;
	struct l2tp_auth peer;		/* the far end's keys and nonces, for 0x04 */
};

static struct fz fz;

static uint64_t fz_rand(void)
{
	uint64_t z = (fz.prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---- the engine's callbacks -------------------------------------------- */

static int op_send(struct l2tp_cc *cc, const uint8_t *buf, size_t len)
{
	static struct l2tp_msg m;
	struct l2tp_secret sec = { (const uint8_t *)FUZZ_SECRET, strlen(FUZZ_SECRET) };
	enum l2tp_drop r;

	(void)cc;
	fz.sent++;
	r = l2tp_msg_decode(&m, buf, len, false, &sec);
	if (r != L2TP_DROP_NONE) {
		fprintf(stderr, "the engine sent what our decoder refuses: %s\n", l2tp_drop_name(r));
		abort();
	}
	/* our SCCRQ/SCCRP nonce: the far end's peer nonce */
	if ((m.type == L2TP_MSG_SCCRQ || m.type == L2TP_MSG_SCCRP) &&
	    l2tp_msg_has(&m, L2TP_AVP_CTRL_MSG_AUTH_NONCE))
		l2tp_auth_set_peer_nonce(&fz.peer, &m.nonce);
	return 0;
}

static int sess_slot(const struct l2tp_sess *s)
{
	for (int i = 0; i < MAX_SESS; i++)
		if (fz.sess[i] == s)
			return i;
	return -1;
}

static void track(struct l2tp_sess *s)
{
	if (sess_slot(s) >= 0)
		return;
	for (int i = 0; i < MAX_SESS; i++)
		if (fz.sess[i] == NULL) {
			fz.sess[i] = s;
			fz.sess_dp_pending[i] = false;
			return;
		}
}

static void op_cc_event(struct l2tp_cc *cc, enum l2tp_cc_state from, enum l2tp_cc_state to,
			const struct l2tp_result *why)
{
	(void)cc; (void)from; (void)why;
	if (to == L2TP_CC_CLOSED)
		fz.dp_tunnel_pending = false;
}

static int op_dp_tunnel_create(struct l2tp_cc *cc)
{
	(void)cc;
	/* now and then at once, else left pending for a local operation */
	if (fz_rand() % 4 == 0) {
		l2tp_cc_dp_done(cc, 0);
		return 0;
	}
	fz.dp_tunnel_pending = true;
	return 0;
}

static void op_dp_tunnel_delete(struct l2tp_cc *cc)
{
	(void)cc;
	fz.dp_tunnel_pending = false;
}

static uint32_t op_alloc_sid(struct l2tp_cc *cc)
{
	(void)cc;
	return ++fz.next_sid;
}

static int op_sess_accept(struct l2tp_cc *cc, struct l2tp_sess *s, const struct l2tp_msg *req,
			  struct l2tp_sess_cfg *out)
{
	(void)cc; (void)req;
	switch (fz_rand() % 8) {
	case 0:
		return L2TP_CDN_NO_RESOURCES_TEMP;
	case 1:
		out->cookie_len = 8;
		break;
	case 2:
		out->cookie_len = 4;
		out->l2ss = 1;
		break;
	default:
		break;
	}
	track(s);
	return 0;
}

static int op_dp_session_create(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	int i = sess_slot(s);

	if (i < 0 || fz_rand() % 3 == 0) {
		l2tp_sess_dp_done(s, 0);
		return 0;
	}
	(void)cc;
	fz.sess_dp_pending[i] = true;
	return 0;
}

static void op_dp_session_delete(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	int i = sess_slot(s);

	(void)cc;
	if (i >= 0)
		fz.sess_dp_pending[i] = false;
}

static void op_sess_event(struct l2tp_cc *cc, struct l2tp_sess *s, enum l2tp_sess_state from,
			  enum l2tp_sess_state to, const struct l2tp_result *why)
{
	(void)cc; (void)from; (void)why;
	if (to != L2TP_SESS_CLOSED)
		track(s);
}

static void op_sess_freed(struct l2tp_cc *cc, struct l2tp_sess *s)
{
	int i = sess_slot(s);

	(void)cc;
	if (i >= 0) {
		fz.sess[i] = NULL;
		fz.sess_dp_pending[i] = false;
	}
}

static void op_random(struct l2tp_cc *cc, void *buf, size_t len)
{
	uint8_t *p = buf;

	(void)cc;
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)fz_rand();
}

static const struct l2tp_cc_ops ops = {
	.send = op_send,
	.cc_event = op_cc_event,
	.dp_tunnel_create = op_dp_tunnel_create,
	.dp_tunnel_delete = op_dp_tunnel_delete,
	.alloc_session_id = op_alloc_sid,
	.sess_accept = op_sess_accept,
	.dp_session_create = op_dp_session_create,
	.dp_session_delete = op_dp_session_delete,
	.sess_event = op_sess_event,
	.sess_freed = op_sess_freed,
	.random = op_random,
};

/* ---- the script --------------------------------------------------------- */

static void configure(uint8_t c, struct l2tp_cc_cfg *cfg)
{
	static const uint16_t windows[] = { 4, 16, 1024, 65535 };

	l2tp_cc_cfg_init(cfg);
	cfg->host_name = "fuzz";
	cfg->router_id = 0x0a000001;
	cfg->vendor_name = "l2tpv3d-fuzz";
	cfg->auth_enabled = (c & 0x02) != 0;
	cfg->secret = (const uint8_t *)FUZZ_SECRET;
	cfg->secret_len = strlen(FUZZ_SECRET);
	cfg->explicit_ack = (c & 0x04) != 0;
	cfg->hide_avps = (c & 0x08) != 0;
	cfg->rx_window = windows[(c >> 4) & 3];
	if (c & 0x40)
		cfg->ack_delay = usl_time_ms(0);
	cfg->send_tie_breaker = (c & 0x80) != 0;
	cfg->seed = 42;
	cfg->stop_hold = usl_time_s(31);
}

/* Our CCID, the Ns we expect, and an Nr that acknowledges all we sent. */
static void fix_header(uint8_t *b, size_t len)
{
	struct l2tp_cc_stats st;

	if (len < L2TP_CTRL_HDR_LEN)
		return;
	l2tp_cc_get_stats(fz.cc, &st);
	usl_put_be16(b, 0xc803);
	usl_put_be16(b + 2, (uint16_t)len);
	/* an idle responder waits for an SCCRQ, addressed to CCID 0 */
	usl_put_be32(b + 4, l2tp_cc_state(fz.cc) == L2TP_CC_IDLE ? 0 : LOCAL_CCID);
	usl_put_be16(b + 8, st.next_nr);
	usl_put_be16(b + 10, st.next_ns);
}

/*
 * Signs a fixed-up datagram as the far end.  An SCCRQ or SCCRP it sends
 * carries its own nonce, which the far end keeps for what it signs next.
 */
static void sign(uint8_t *b, size_t len)
{
	static struct l2tp_msg m;
	const struct l2tp_secret sec = { (const uint8_t *)FUZZ_SECRET, strlen(FUZZ_SECRET) };

	/* Message Type AVP first, value 1 or 2: worth a full decode */
	if (len >= 20 && b[14] == 0 && b[15] == 0 && b[16] == 0 && b[17] == 0 && b[18] == 0 &&
	    (b[19] == L2TP_MSG_SCCRQ || b[19] == L2TP_MSG_SCCRP) &&
	    l2tp_msg_decode(&m, b, len, false, &sec) == L2TP_DROP_NONE &&
	    l2tp_msg_has(&m, L2TP_AVP_CTRL_MSG_AUTH_NONCE) &&
	    m.nonce.len <= sizeof(fz.peer.local_nonce)) {
		memcpy(fz.peer.local_nonce, m.nonce.p, m.nonce.len);
		fz.peer.local_nonce_len = (uint8_t)m.nonce.len;
	}
	l2tp_auth_sign(&fz.peer, b, len, false);	/* no digest AVP: sent unsigned */
}

static void local_op(uint8_t op)
{
	struct l2tp_sess_cfg sc;
	int i = (op >> 3) % MAX_SESS;

	switch (op & 7) {
	case 0:
		l2tp_cc_connect(fz.cc);
		break;
	case 1:
		l2tp_cc_close(fz.cc, L2TP_STOPCCN_NORMAL, 0, "fuzz");
		break;
	case 2:
		l2tp_sess_cfg_init(&sc);
		sc.remote_end_id = (const uint8_t *)"fz";
		sc.remote_end_id_len = 2;
		sc.cookie_len = (op & 0x40) ? 8 : 0;
		sc.outgoing = (op & 0x80) != 0;
		{
			struct l2tp_sess *s = l2tp_sess_open(fz.cc, &sc, NULL);

			if (s != NULL)
				track(s);
		}
		break;
	case 3:
		if (fz.sess[i] != NULL)
			l2tp_sess_close(fz.sess[i], L2TP_CDN_ADMIN, 0, "fuzz");
		break;
	case 4:
		if (fz.dp_tunnel_pending) {
			fz.dp_tunnel_pending = false;
			l2tp_cc_dp_done(fz.cc, (op & 0x80) ? -5 : 0);
		}
		break;
	case 5:
		if (fz.sess[i] != NULL && fz.sess_dp_pending[i]) {
			fz.sess_dp_pending[i] = false;
			l2tp_sess_dp_done(fz.sess[i], (op & 0x80) ? -12 : 0);
		}
		break;
	case 6:
		if (fz.sess[i] != NULL)
			l2tp_sess_set_circuit_status(fz.sess[i], (op & 0x80) != 0);
		break;
	default:
		l2tp_cc_note_rx(fz.cc);
		break;
	}
}

static void check_invariants(void)
{
	enum l2tp_cc_state s = l2tp_cc_state(fz.cc);

	if (s != L2TP_CC_IDLE && !l2tp_cc_has_deadline(fz.cc)) {
		fprintf(stderr, "connection in %s without a deadline\n", l2tp_cc_state_name(s));
		abort();
	}
}

static void quiet(enum log_level lvl, const char *msg, void *arg)
{
	(void)lvl; (void)msg; (void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t dg[MAX_DGRAM];
	struct l2tp_cc_cfg cfg;
	size_t pos = 1, len;
	enum l2tp_drop r;
	static int trace = -1;	/* FUZZ_ENGINE_TRACE=1: what each datagram did */

	if (size < 1)
		return 0;
	if (trace < 0)
		trace = getenv("FUZZ_ENGINE_TRACE") != NULL;
	/* the engine's log lines are formatted (that code runs) but not printed */
	log_set_sink(quiet, NULL);
	memset(&fz, 0, sizeof(fz));
	fz.prng = size;
	usl_fake_clock_init(&fz.clock, usl_time_s(1000));
	usl_timerset_init(&fz.ts, &fz.clock.clock);
	configure(data[0], &cfg);
	l2tp_auth_init(&fz.peer);
	l2tp_auth_add_key(&fz.peer, cfg.digest_type, cfg.secret, cfg.secret_len);
	fz.cc = l2tp_cc_new(&cfg, &ops, &fz.ts, LOCAL_CCID, NULL);
	if (fz.cc == NULL)
		abort();
	if (data[0] & 0x01)
		l2tp_cc_connect(fz.cc);
	while (pos < size) {
		uint8_t kind = data[pos++];

		if (kind <= 1 || kind == 4) {
			if (size - pos < 2)
				break;
			len = (size_t)data[pos] << 8 | data[pos + 1];
			pos += 2;
			if (len > size - pos)
				len = size - pos;
			if (len > MAX_DGRAM)
				len = MAX_DGRAM;
			memcpy(dg, data + pos, len);
			pos += len;
			if (kind != 0)
				fix_header(dg, len);
			if (kind == 4)
				sign(dg, len);
			r = l2tp_cc_input(fz.cc, dg, len);
			if (trace)
				fprintf(stderr, "record %u: %zu octets: %s, %s\n", kind, len,
					l2tp_drop_name(r), l2tp_cc_state_name(l2tp_cc_state(fz.cc)));
		} else if (kind == 2 && pos < size) {
			fz.clock.now = usl_time_add(fz.clock.now, usl_time_ms(50u * data[pos++]));
			usl_timerset_run(&fz.ts);
		} else if (kind == 3 && pos < size) {
			local_op(data[pos++]);
		} else {
			break;
		}
		check_invariants();
		if (l2tp_cc_state(fz.cc) == L2TP_CC_CLOSED)
			break;
	}
	l2tp_cc_free(fz.cc);
	/* whatever the engine left armed must be gone with it */
	usl_timerset_run(&fz.ts);
	return 0;
}
