/*
 * src/proto/msg.c - L2TPv3 control message codec (RFC 3931 3.2.1, 5, 6).
 *
 * Decoding walks the AVPs once with a bounded reader.  What each AVP may
 * look like comes from the rules table (avp.c); where its value lands in
 * struct l2tp_msg comes from the codec table below, so adding an AVP is two
 * table lines.  Encoding walks the same tables in type order.
 *
 * Policy for what the RFC leaves to the receiver:
 *  - recognised AVPs: M is never inspected (5.2), except that a malformed
 *    recognised AVP with M=0 is ignored instead of dropping the message (7.1);
 *  - the RFC 2661 AVPs RFC 3931 obsoletes, and Cisco's draft-era copies of
 *    the L2TPv3 AVPs, are recognised and skipped whatever their M bit;
 *  - unrecognised M=1 AVPs do not fail decoding: they are flagged for the
 *    FSM, which answers StopCCN/CDN 2/8 (5.2);
 *  - an AVP repeated with the same value is tolerated (Cisco sends PW Type
 *    and Data Sequencing twice); a repeat with another value is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "usl/buf.h"
#include "usl/escape.h"
#include "auth.h"
#include "msg.h"

#define VALUE_MAX	(L2TP_AVP_MAX_LEN - L2TP_AVP_HDR_LEN)
#define HIDDEN_HDR_LEN	2	/* "Length of Original Value" (5.3) */
#define OFF(f)		((uint16_t)offsetof(struct l2tp_msg, f))

/* How an AVP value maps onto struct l2tp_msg. */
enum val_kind {
	V_NONE,		/* handled by the AVP loop itself */
	V_U16,
	V_U32,
	V_U32_NZ,	/* identifiers that must not be zero */
	V_U64,
	V_BYTES,	/* struct l2tp_bytes pointing into the message */
	V_SPEED32,	/* RFC 2661 4-octet connect speed, widened to u64 */
	V_CUSTOM,
};

typedef enum l2tp_drop (*dec_fn)(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
typedef int (*enc_fn)(const struct l2tp_msg *m, struct usl_wbuf *w);

struct avp_codec {
	uint8_t kind;		/* enum val_kind */
	uint16_t off;		/* field offset for the generic kinds */
	dec_fn dec;		/* V_CUSTOM only */
	enc_fn enc;
	uint16_t alias;		/* AVP whose field this fills too (24 -> 74) */
};

/* One AVP as found on the wire (or, once unhidden, its plaintext). */
struct avp {
	uint16_t flags;		/* M, H */
	uint16_t vendor;
	uint16_t type;
	size_t off;		/* of the AVP header, from the L2TP header */
	const uint8_t *v;
	uint16_t len;		/* value length */
};

/* Decoder state for one message. */
struct dec {
	struct l2tp_msg *m;
	const struct l2tp_secret *secret;
	uint8_t key[L2TP_AUTH_KEY_LEN];	/* hiding key, derived on first use */
	bool have_key;
	const uint8_t *rv;		/* last Random Vector seen */
	uint16_t rv_len;
	bool have_rv;
	bool digest_pos;		/* only Message Type/Digest so far */
	uint64_t seen[2];		/* per AVP type, for repeats */
	struct l2tp_bytes seen_val[L2TP_AVP_MAX_KNOWN + 1];
};

static enum l2tp_drop dec_result(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_pw_caps(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_cookie(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_circuit_errors(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_failover_cap(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_recovery(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_scs(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static enum l2tp_drop dec_fss(struct l2tp_msg *m, const uint8_t *v, uint16_t len);
static int enc_result(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_pw_caps(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_cookie(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_circuit_errors(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_failover_cap(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_recovery(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_scs(const struct l2tp_msg *m, struct usl_wbuf *w);
static int enc_fss(const struct l2tp_msg *m, struct usl_wbuf *w);

#define CUSTOM(name)	{ .kind = V_CUSTOM, .dec = dec_##name, .enc = enc_##name }
#define GEN(k, f)	{ .kind = k, .off = OFF(f) }
#define WIDE(f, a)	{ .kind = V_SPEED32, .off = OFF(f), .alias = a }

static const struct avp_codec codecs[L2TP_AVP_MAX_KNOWN + 1] = {
	[L2TP_AVP_RESULT_CODE]		= CUSTOM(result),
	[L2TP_AVP_TIE_BREAKER]		= GEN(V_U64, tie_breaker),
	[L2TP_AVP_FIRMWARE_REVISION]	= GEN(V_U16, firmware_rev),
	[L2TP_AVP_HOST_NAME]		= GEN(V_BYTES, host_name),
	[L2TP_AVP_VENDOR_NAME]		= GEN(V_BYTES, vendor_name),
	[L2TP_AVP_RECV_WINDOW_SIZE]	= GEN(V_U16, recv_window),
	[L2TP_AVP_SERIAL_NUMBER]	= GEN(V_U32, serial),
	[L2TP_AVP_TX_CONNECT_SPEED]	= WIDE(tx_speed, L2TP_AVP_TX_CONNECT_SPEED_BPS),
	[L2TP_AVP_PHYSICAL_CHANNEL_ID]	= GEN(V_U32, phys_channel_id),
	[L2TP_AVP_CIRCUIT_ERRORS]	= CUSTOM(circuit_errors),
	[L2TP_AVP_RANDOM_VECTOR]	= GEN(V_BYTES, random_vector),
	[L2TP_AVP_RX_CONNECT_SPEED]	= WIDE(rx_speed, L2TP_AVP_RX_CONNECT_SPEED_BPS),
	[L2TP_AVP_ROUTER_ID]		= GEN(V_U32, router_id),
	[L2TP_AVP_ASSIGNED_CCID]	= GEN(V_U32_NZ, assigned_ccid),
	[L2TP_AVP_PW_CAP_LIST]		= CUSTOM(pw_caps),
	[L2TP_AVP_LOCAL_SESSION_ID]	= GEN(V_U32_NZ, local_sid),
	/* zero is how a session message says "your ID is not known yet" */
	[L2TP_AVP_REMOTE_SESSION_ID]	= GEN(V_U32, remote_sid),
	[L2TP_AVP_ASSIGNED_COOKIE]	= CUSTOM(cookie),
	[L2TP_AVP_REMOTE_END_ID]	= GEN(V_BYTES, remote_end_id),
	[L2TP_AVP_PW_TYPE]		= GEN(V_U16, pw_type),
	[L2TP_AVP_L2_SPECIFIC_SUBLAYER]	= GEN(V_U16, l2ss),
	[L2TP_AVP_DATA_SEQUENCING]	= GEN(V_U16, data_seq),
	[L2TP_AVP_CIRCUIT_STATUS]	= GEN(V_U16, circuit_status),
	[L2TP_AVP_PREFERRED_LANGUAGE]	= GEN(V_BYTES, preferred_language),
	[L2TP_AVP_CTRL_MSG_AUTH_NONCE]	= GEN(V_BYTES, nonce),
	[L2TP_AVP_TX_CONNECT_SPEED_BPS]	= GEN(V_U64, tx_speed),
	[L2TP_AVP_RX_CONNECT_SPEED_BPS]	= GEN(V_U64, rx_speed),
	[L2TP_AVP_FAILOVER_CAP]		= CUSTOM(failover_cap),
	[L2TP_AVP_TUNNEL_RECOVERY]	= CUSTOM(recovery),
	[L2TP_AVP_SUGGESTED_CTRL_SEQ]	= CUSTOM(scs),
	[L2TP_AVP_FAILOVER_SESSION]	= CUSTOM(fss),
};

#define LO(t)	L2TP_AVP_BIT(t)
#define HI(t)	L2TP_AVP_BIT((t) - 64)

/* The AVPs each message type MUST carry besides Message Type (RFC 3931 6). */
struct required {
	uint64_t lo, hi;	/* as l2tp_msg.present, present2 */
};

#define SCCRX_REQ	{ LO(L2TP_AVP_HOST_NAME) | LO(L2TP_AVP_ROUTER_ID) | \
			  LO(L2TP_AVP_ASSIGNED_CCID) | LO(L2TP_AVP_PW_CAP_LIST), 0 }
#define SIDS_LO		LO(L2TP_AVP_LOCAL_SESSION_ID)
#define SIDS_HI		HI(L2TP_AVP_REMOTE_SESSION_ID)
/* the Remote Session ID is required even while it is 0: Cisco IOS insists */
#define XCRQ_REQ	{ SIDS_LO | LO(L2TP_AVP_SERIAL_NUMBER), SIDS_HI | HI(L2TP_AVP_PW_TYPE) | \
			  HI(L2TP_AVP_REMOTE_END_ID) | HI(L2TP_AVP_CIRCUIT_STATUS) }
/*
 * Required by RFC 3931 but not on receipt: some open-source LACs omit the
 * Serial Number, and nothing depends on it (we always send one).
 */
#define TOLERATED_LO	LO(L2TP_AVP_SERIAL_NUMBER)
#define XCRP_REQ	{ SIDS_LO, SIDS_HI | HI(L2TP_AVP_CIRCUIT_STATUS) }

static const struct required required[L2TP_MSG_TYPE_MAX + 1] = {
	[L2TP_MSG_SCCRQ]	= SCCRX_REQ,
	[L2TP_MSG_SCCRP]	= SCCRX_REQ,
	[L2TP_MSG_STOPCCN]	= { LO(L2TP_AVP_RESULT_CODE), 0 },
	[L2TP_MSG_OCRQ]		= XCRQ_REQ,
	[L2TP_MSG_OCRP]		= XCRP_REQ,
	[L2TP_MSG_OCCN]		= { SIDS_LO, SIDS_HI },
	[L2TP_MSG_ICRQ]		= XCRQ_REQ,
	[L2TP_MSG_ICRP]		= XCRP_REQ,
	[L2TP_MSG_ICCN]		= { SIDS_LO, SIDS_HI },
	[L2TP_MSG_CDN]		= { SIDS_LO | LO(L2TP_AVP_RESULT_CODE), SIDS_HI },
	[L2TP_MSG_WEN]		= { SIDS_LO | LO(L2TP_AVP_CIRCUIT_ERRORS), SIDS_HI },
	[L2TP_MSG_SLI]		= { SIDS_LO, SIDS_HI },
	[L2TP_MSG_FSQ]		= { 0, HI(L2TP_AVP_FAILOVER_SESSION) },
	[L2TP_MSG_FSR]		= { 0, HI(L2TP_AVP_FAILOVER_SESSION) },
};

static const char *const msg_names[L2TP_MSG_TYPE_MAX + 1] = {
	[L2TP_MSG_ZLB]		= "ZLB",
	[L2TP_MSG_SCCRQ]	= "SCCRQ",
	[L2TP_MSG_SCCRP]	= "SCCRP",
	[L2TP_MSG_SCCCN]	= "SCCCN",
	[L2TP_MSG_STOPCCN]	= "StopCCN",
	[L2TP_MSG_HELLO]	= "HELLO",
	[L2TP_MSG_OCRQ]		= "OCRQ",
	[L2TP_MSG_OCRP]		= "OCRP",
	[L2TP_MSG_OCCN]		= "OCCN",
	[L2TP_MSG_ICRQ]		= "ICRQ",
	[L2TP_MSG_ICRP]		= "ICRP",
	[L2TP_MSG_ICCN]		= "ICCN",
	[L2TP_MSG_CDN]		= "CDN",
	[L2TP_MSG_WEN]		= "WEN",
	[L2TP_MSG_SLI]		= "SLI",
	[L2TP_MSG_ACK]		= "ACK",
	[L2TP_MSG_FSQ]		= "FSQ",
	[L2TP_MSG_FSR]		= "FSR",
};

/* Message types RFC 3931 defines (the ZLB has no Message Type AVP at all). */
static bool msg_type_known(uint16_t type)
{
	return type != L2TP_MSG_ZLB && type <= L2TP_MSG_TYPE_MAX && msg_names[type] != NULL;
}

static void *field(struct l2tp_msg *m, uint16_t off)
{
	return (char *)m + off;
}

static const void *cfield(const struct l2tp_msg *m, uint16_t off)
{
	return (const char *)m + off;
}

static bool bit_test(const uint64_t *set, unsigned t)
{
	return (set[t / 64] & L2TP_AVP_BIT(t)) != 0;
}

/* ---- custom values ---- */

/* Result Code: code, then optionally error code, then optionally text (5.4.2). */
static enum l2tp_drop dec_result(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	if (len == 3)
		return L2TP_DROP_BAD_AVP_LENGTH;
	m->result.result = usl_get_be16(v);
	m->result.has_error = len >= 4;
	m->result.error = len >= 4 ? usl_get_be16(v + 2) : 0;
	m->result.message.p = len > 4 ? v + 4 : NULL;
	m->result.message.len = len > 4 ? len - 4 : 0;
	return L2TP_DROP_NONE;
}

static int enc_result(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	const struct l2tp_result *r = &m->result;

	usl_wbuf_u16(w, r->result);
	/* a message cannot travel without the error code before it */
	if (r->has_error || r->message.len)
		usl_wbuf_u16(w, r->error);
	if (r->message.len && r->message.p == NULL)
		return -1;
	if (r->message.len)
		usl_wbuf_put(w, r->message.p, r->message.len);
	return 0;
}

/* More than L2TP_MAX_PW_CAPS types: the first ones are kept, the rest ignored. */
static enum l2tp_drop dec_pw_caps(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	unsigned i, n = len / 2;

	if (len % 2)
		return L2TP_DROP_BAD_AVP_LENGTH;
	if (n > L2TP_MAX_PW_CAPS)
		n = L2TP_MAX_PW_CAPS;
	for (i = 0; i < n; i++)
		m->pw_caps[i] = usl_get_be16(v + 2 * i);
	m->n_pw_caps = (uint8_t)n;
	return L2TP_DROP_NONE;
}

static int enc_pw_caps(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	unsigned i;

	if (m->n_pw_caps == 0 || m->n_pw_caps > L2TP_MAX_PW_CAPS)
		return -1;
	for (i = 0; i < m->n_pw_caps; i++)
		usl_wbuf_u16(w, m->pw_caps[i]);
	return 0;
}

static bool cookie_len_ok(unsigned len)
{
	return len == 0 || len == 4 || len == 8;
}

static enum l2tp_drop dec_cookie(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	if (!cookie_len_ok(len))
		return L2TP_DROP_BAD_AVP_VALUE;
	if (len)
		memcpy(m->cookie, v, len);
	m->cookie_len = (uint8_t)len;
	return L2TP_DROP_NONE;
}

static int enc_cookie(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	if (!cookie_len_ok(m->cookie_len))
		return -1;
	return usl_wbuf_put(w, m->cookie, m->cookie_len);
}

/* Circuit Errors (WEN): 2 reserved octets, then six 32-bit counters. */
static enum l2tp_drop dec_circuit_errors(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	m->circuit_errors_reserved = usl_get_be16(v);
	m->crc_errors = usl_get_be32(v + 2);
	m->framing_errors = usl_get_be32(v + 6);
	m->hw_overruns = usl_get_be32(v + 10);
	m->buffer_overruns = usl_get_be32(v + 14);
	m->timeout_errors = usl_get_be32(v + 18);
	m->alignment_errors = usl_get_be32(v + 22);
	return L2TP_DROP_NONE;
}

static int enc_circuit_errors(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	usl_wbuf_u16(w, m->circuit_errors_reserved);
	usl_wbuf_u32(w, m->crc_errors);
	usl_wbuf_u32(w, m->framing_errors);
	usl_wbuf_u32(w, m->hw_overruns);
	usl_wbuf_u32(w, m->buffer_overruns);
	usl_wbuf_u32(w, m->timeout_errors);
	usl_wbuf_u32(w, m->alignment_errors);
	return 0;
}

/*
 * Failover Capability (RFC 4951): 14 reserved bits, D, C, then the Recovery
 * Time.  Reserved bits are ignored; "neither C nor D" is the sender's error,
 * read as "not capable".
 */
static enum l2tp_drop dec_failover_cap(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	(void)len;
	m->failover_flags = usl_get_be16(v) & (L2TP_FAILOVER_C | L2TP_FAILOVER_D);
	m->recovery_time_ms = usl_get_be32(v + 2);
	return L2TP_DROP_NONE;
}

static int enc_failover_cap(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	usl_wbuf_u16(w, m->failover_flags);
	usl_wbuf_u32(w, m->recovery_time_ms);
	return 0;
}

/* Tunnel Recovery: reserved, Recover Tunnel ID, Recover Remote Tunnel ID. */
static enum l2tp_drop dec_recovery(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	(void)len;
	m->recover_ccid = usl_get_be32(v + 2);
	m->recover_peer_ccid = usl_get_be32(v + 6);
	if (m->recover_ccid == 0 || m->recover_peer_ccid == 0)
		return L2TP_DROP_BAD_AVP_VALUE;
	return L2TP_DROP_NONE;
}

static int enc_recovery(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	usl_wbuf_u16(w, 0);
	usl_wbuf_u32(w, m->recover_ccid);
	usl_wbuf_u32(w, m->recover_peer_ccid);
	return 0;
}

/* Suggested Control Sequence: reserved, Ns, Nr; or reserved and two 32-bit words. */
static enum l2tp_drop dec_scs(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	if (len == 6) {
		m->suggested_ns = usl_get_be16(v + 2);
		m->suggested_nr = usl_get_be16(v + 4);
	} else if (len == 10) {
		m->suggested_ns = (uint16_t)usl_get_be32(v + 2);
		m->suggested_nr = (uint16_t)usl_get_be32(v + 6);
	} else {
		return L2TP_DROP_BAD_AVP_LENGTH;
	}
	return L2TP_DROP_NONE;
}

static int enc_scs(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	usl_wbuf_u16(w, 0);
	usl_wbuf_u16(w, m->suggested_ns);
	usl_wbuf_u16(w, m->suggested_nr);
	return 0;
}

/* Failover Session State: one per session; beyond L2TP_MAX_FSS they are ignored. */
static enum l2tp_drop dec_fss(struct l2tp_msg *m, const uint8_t *v, uint16_t len)
{
	(void)len;
	if (m->n_fss >= L2TP_MAX_FSS) {
		m->n_skipped++;
		return L2TP_DROP_NONE;
	}
	m->fss[m->n_fss].sid = usl_get_be32(v + 2);
	m->fss[m->n_fss].remote_sid = usl_get_be32(v + 6);
	m->n_fss++;
	return L2TP_DROP_NONE;
}

/* Only the first: put_avps() writes the others (one AVP per session). */
static int enc_fss(const struct l2tp_msg *m, struct usl_wbuf *w)
{
	if (m->n_fss == 0 || m->n_fss > L2TP_MAX_FSS)
		return -1;
	usl_wbuf_u16(w, 0);
	usl_wbuf_u32(w, m->fss[0].sid);
	usl_wbuf_u32(w, m->fss[0].remote_sid);
	return 0;
}

/* ---- decoding ---- */

static enum l2tp_drop dec_value(struct l2tp_msg *m, const struct avp_codec *c,
				const uint8_t *v, uint16_t len)
{
	struct l2tp_bytes *b;
	uint32_t u32;

	switch (c->kind) {
	case V_U16:
		*(uint16_t *)field(m, c->off) = usl_get_be16(v);
		break;
	case V_U32:
	case V_U32_NZ:
		u32 = usl_get_be32(v);
		if (c->kind == V_U32_NZ && u32 == 0)
			return L2TP_DROP_BAD_AVP_VALUE;
		*(uint32_t *)field(m, c->off) = u32;
		break;
	case V_SPEED32:
		*(uint64_t *)field(m, c->off) = usl_get_be32(v);
		break;
	case V_U64:
		*(uint64_t *)field(m, c->off) = (uint64_t)usl_get_be32(v) << 32 |
						usl_get_be32(v + 4);
		break;
	case V_BYTES:
		b = field(m, c->off);
		b->p = v;
		b->len = len;
		break;
	case V_CUSTOM:
		return c->dec(m, v, len);
	default:
		/* a rule without a codec entry: a table bug, never a silent accept */
		return L2TP_DROP_BAD_AVP_VALUE;
	}
	return L2TP_DROP_NONE;
}

/* Reads the next AVP header and value; never past the message. */
static enum l2tp_drop next_avp(struct usl_rbuf *r, struct avp *a)
{
	uint16_t fl, alen;

	a->off = L2TP_CTRL_HDR_LEN + r->off;
	if (usl_rbuf_left(r) < L2TP_AVP_HDR_LEN)
		return L2TP_DROP_AVP_OVERRUN;
	usl_rbuf_u16(r, &fl);
	usl_rbuf_u16(r, &a->vendor);
	usl_rbuf_u16(r, &a->type);
	alen = fl & L2TP_AVP_LEN_MASK;
	if (alen < L2TP_AVP_HDR_LEN)
		return L2TP_DROP_AVP_TOO_SHORT;
	a->flags = fl & (L2TP_AVP_F_M | L2TP_AVP_F_H);
	a->len = alen - L2TP_AVP_HDR_LEN;
	a->v = usl_rbuf_take(r, a->len);
	return a->v ? L2TP_DROP_NONE : L2TP_DROP_AVP_OVERRUN;
}

static void note_unknown(struct dec *d, const struct avp *a)
{
	struct l2tp_msg *m = d->m;

	/*
	 * 4.7.3: a v2 SCCRQ (automatic fallback) carries L2TPv2 AVPs with
	 * M=1 that a v3-only implementation must ignore.
	 */
	if (!(a->flags & L2TP_AVP_F_M) || m->ver == 2) {
		m->n_skipped++;
		return;
	}
	if (!m->has_unknown_mandatory) {
		m->unknown_mandatory_vendor = a->vendor;
		m->unknown_mandatory_type = a->type;
	}
	m->has_unknown_mandatory = true;
}

/* Vendor AVPs, including IETF type 58 which only wraps a 32-bit vendor ID. */
static enum l2tp_drop dec_vendor(struct dec *d, const struct avp *a)
{
	if (l2tp_avp_vendor_ignored(a->vendor, a->type))
		d->m->n_skipped++;
	else
		note_unknown(d, a);
	return L2TP_DROP_NONE;
}

/* Message Digest: only directly after Message Type, at most twice (5.4.1). */
static enum l2tp_drop dec_digest(struct dec *d, const struct avp *a)
{
	struct l2tp_msg *m = d->m;
	struct l2tp_digest_avp *dg;
	uint8_t dlen;

	if (m->n_digests >= 2)
		return L2TP_DROP_DUPLICATE_AVP;
	if (!d->digest_pos || (a->flags & L2TP_AVP_F_H))
		return L2TP_DROP_BAD_AVP_VALUE;
	if (a->len < 1)
		return L2TP_DROP_BAD_AVP_LENGTH;
	switch (a->v[0]) {
	case L2TP_DIGEST_HMAC_MD5:	dlen = 16; break;
	case L2TP_DIGEST_HMAC_SHA1:	dlen = 20; break;
	default:			return L2TP_DROP_BAD_AVP_VALUE;
	}
	if (a->len != 1 + dlen)
		return L2TP_DROP_BAD_AVP_LENGTH;
	dg = &m->digest[m->n_digests++];
	dg->type = a->v[0];
	dg->len = dlen;
	dg->value_off = (uint16_t)(a->off + L2TP_AVP_HDR_LEN + 1);
	memcpy(dg->value, a->v + 1, dlen);
	l2tp_msg_set(m, L2TP_AVP_MESSAGE_DIGEST);
	return L2TP_DROP_NONE;
}

/*
 * Replaces a hidden value by its plaintext, copied into m->scratch.  The
 * decrypted length field is attacker-controlled once the secret is wrong:
 * it is bounded by the AVP and by the scratch space before any use.
 */
static enum l2tp_drop unhide(struct dec *d, struct avp *a)
{
	const struct l2tp_secret *s = d->secret;
	struct l2tp_msg *m = d->m;
	uint8_t tmp[VALUE_MAX];
	uint16_t sub;

	if (!d->have_rv)
		return L2TP_DROP_HIDDEN_NO_RANDOM_VECTOR;
	if (s == NULL || s->p == NULL || s->len == 0)
		return L2TP_DROP_HIDDEN_NO_SECRET;
	if (a->len < HIDDEN_HDR_LEN)
		return L2TP_DROP_HIDDEN_BAD_LENGTH;
	if (!d->have_key) {
		l2tp_derive_key(s->p, s->len, L2TP_KEY_ID_HIDE, d->key);
		d->have_key = true;
	}
	memcpy(tmp, a->v, a->len);
	if (l2tp_hide(d->key, a->type, d->rv, d->rv_len, tmp, a->len, true) < 0)
		return L2TP_DROP_HIDDEN_BAD_LENGTH;
	sub = usl_get_be16(tmp);
	if (sub > a->len - HIDDEN_HDR_LEN || sub > sizeof(m->scratch) - m->scratch_used)
		return L2TP_DROP_HIDDEN_BAD_LENGTH;
	memcpy(m->scratch + m->scratch_used, tmp + HIDDEN_HDR_LEN, sub);
	a->v = m->scratch + m->scratch_used;
	a->len = sub;
	m->scratch_used += sub;
	return L2TP_DROP_NONE;
}

/* A repeat with the same value is harmless; with another, ambiguous. */
static enum l2tp_drop check_repeat(struct dec *d, const struct avp *a,
				   const struct l2tp_avp_rule *rule, bool *skip)
{
	const struct l2tp_bytes *prev = &d->seen_val[a->type];

	*skip = false;
	if (!bit_test(d->seen, a->type) || (rule->flags & L2TP_AVPR_REPEAT))
		return L2TP_DROP_NONE;
	if (prev->len != a->len || (a->len && memcmp(prev->p, a->v, a->len)))
		return L2TP_DROP_DUPLICATE_AVP;
	*skip = true;
	return L2TP_DROP_NONE;
}

static enum l2tp_drop check_and_store(struct dec *d, const struct avp *a,
				      const struct l2tp_avp_rule *rule)
{
	const struct avp_codec *c = &codecs[a->type];

	if (a->len < rule->min_len || a->len > rule->max_len)
		return L2TP_DROP_BAD_AVP_LENGTH;
	return dec_value(d->m, c, a->v, a->len);
}

static void mark_seen(struct dec *d, const struct avp *a)
{
	struct l2tp_msg *m = d->m;
	uint16_t alias = codecs[a->type].alias;

	d->seen[a->type / 64] |= L2TP_AVP_BIT(a->type);
	d->seen_val[a->type].p = a->v;
	d->seen_val[a->type].len = a->len;
	l2tp_msg_set(m, a->type);
	/* the widened v2 speed is read where the v3 one is: tx_speed/rx_speed */
	if (alias)
		l2tp_msg_set(m, alias);
	if (a->type == L2TP_AVP_RANDOM_VECTOR) {
		d->rv = a->v;
		d->rv_len = a->len;
		d->have_rv = true;
	}
}

/* Malformed recognised AVP (7.1): fatal with M=1, ignored with M=0. */
static enum l2tp_drop malformed(struct dec *d, const struct avp *a, enum l2tp_drop why)
{
	if (a->flags & L2TP_AVP_F_M)
		return why;
	d->m->n_skipped++;
	return L2TP_DROP_NONE;
}

static enum l2tp_drop dec_ietf(struct dec *d, struct avp *a)
{
	const struct l2tp_avp_rule *rule = l2tp_avp_rule(a->type);
	enum l2tp_drop rc;
	bool skip;

	if (rule == NULL) {
		note_unknown(d, a);
		return L2TP_DROP_NONE;
	}
	if (rule->flags & L2TP_AVPR_IGNORE) {
		d->m->n_skipped++;
		return L2TP_DROP_NONE;
	}
	if (a->flags & L2TP_AVP_F_H) {
		if (!(rule->flags & L2TP_AVPR_HIDE_OK))
			return malformed(d, a, L2TP_DROP_BAD_AVP_VALUE);
		rc = unhide(d, a);
		if (rc != L2TP_DROP_NONE)
			return malformed(d, a, rc);
	}
	rc = check_repeat(d, a, rule, &skip);
	if (rc != L2TP_DROP_NONE)
		return malformed(d, a, rc);
	if (skip) {
		d->m->n_skipped++;
		return L2TP_DROP_NONE;
	}
	rc = check_and_store(d, a, rule);
	if (rc != L2TP_DROP_NONE)
		return malformed(d, a, rc);
	mark_seen(d, a);
	return L2TP_DROP_NONE;
}

static enum l2tp_drop dec_avp(struct dec *d, struct avp *a)
{
	if (a->vendor == L2TP_VENDOR_IETF && a->type == L2TP_AVP_MESSAGE_DIGEST)
		return dec_digest(d, a);
	d->digest_pos = false;
	if (a->vendor != L2TP_VENDOR_IETF || a->type == L2TP_AVP_EXTENDED_VENDOR_ID)
		return dec_vendor(d, a);
	if (a->type == L2TP_AVP_MESSAGE_TYPE)
		return L2TP_DROP_DUPLICATE_AVP;
	return dec_ietf(d, a);
}

/*
 * The first AVP names the message.  A vendor Message Type (a vendor's own
 * message) or an unknown type is refused with UNKNOWN_MSG_TYPE; m->type_m
 * then tells the FSM whether the peer wants the connection cleared (M=1)
 * or the message just ignored (M=0).
 */
static enum l2tp_drop dec_msg_type(struct dec *d, struct usl_rbuf *r)
{
	struct l2tp_msg *m = d->m;
	enum l2tp_drop rc;
	struct avp a;

	rc = next_avp(r, &a);
	if (rc != L2TP_DROP_NONE)
		return rc;
	if (a.type != L2TP_AVP_MESSAGE_TYPE || (a.flags & L2TP_AVP_F_H))
		return L2TP_DROP_FIRST_AVP_NOT_MSG_TYPE;
	m->type_m = (a.flags & L2TP_AVP_F_M) != 0;
	if (a.vendor != L2TP_VENDOR_IETF)
		return L2TP_DROP_UNKNOWN_MSG_TYPE;
	if (a.len != 2)
		return L2TP_DROP_BAD_AVP_LENGTH;
	m->type = usl_get_be16(a.v);
	if (!msg_type_known(m->type))
		return L2TP_DROP_UNKNOWN_MSG_TYPE;
	/* Ver=2 is accepted for the fallback SCCRQ only (4.7.3) */
	if (m->ver == 2 && m->type != L2TP_MSG_SCCRQ)
		return L2TP_DROP_BAD_VERSION;
	l2tp_msg_set(m, L2TP_AVP_MESSAGE_TYPE);
	d->seen[0] |= L2TP_AVP_BIT(L2TP_AVP_MESSAGE_TYPE);
	return L2TP_DROP_NONE;
}

enum l2tp_drop l2tp_msg_decode_header(struct l2tp_msg *m, const uint8_t *buf, size_t len,
				      bool has_session0)
{
	uint16_t flags, length, ver;
	struct usl_rbuf r;
	uint32_t s0;

	usl_rbuf_init(&r, buf, len);
	if (has_session0) {
		if (usl_rbuf_u32(&r, &s0) < 0)
			return L2TP_DROP_SHORT_HEADER;
		if (s0 != 0)
			return L2TP_DROP_IP_SESSION_NONZERO;
	}
	if (usl_rbuf_left(&r) < L2TP_CTRL_HDR_LEN)
		return L2TP_DROP_SHORT_HEADER;
	usl_rbuf_u16(&r, &flags);
	usl_rbuf_u16(&r, &length);
	usl_rbuf_u32(&r, &m->ccid);
	usl_rbuf_u16(&r, &m->ns);
	usl_rbuf_u16(&r, &m->nr);
	/* reserved bits are ignored on receipt (3.2.1) */
	if (!(flags & L2TP_HDR_T))
		return L2TP_DROP_NOT_CONTROL;
	ver = flags & L2TP_HDR_VER_MASK;
	/* over IP there is no L2TPv2 to fall back to */
	if (ver != 3 && (ver != 2 || has_session0))
		return L2TP_DROP_BAD_VERSION;
	m->ver = (uint8_t)ver;
	if (!(flags & L2TP_HDR_L))
		return L2TP_DROP_NO_LENGTH_BIT;
	if (!(flags & L2TP_HDR_S))
		return L2TP_DROP_NO_SEQ_BIT;
	if (length != usl_rbuf_left(&r) + L2TP_CTRL_HDR_LEN || length > L2TP_MAX_MSG)
		return L2TP_DROP_LENGTH_MISMATCH;
	return L2TP_DROP_NONE;
}

static void note_bad_missing(struct l2tp_msg *m);

/* Keeps the first problem of a message that can still be acknowledged. */
static void note_bad(struct l2tp_msg *m, enum l2tp_drop why, uint16_t avp)
{
	if (m->bad != L2TP_DROP_NONE)
		return;
	m->bad = why;
	m->bad_avp = avp;
}

enum l2tp_drop l2tp_msg_decode(struct l2tp_msg *m, const uint8_t *buf, size_t len,
			       bool has_session0, const struct l2tp_secret *secret)
{
	size_t skip = has_session0 ? L2TP_IP_SESSION0_LEN : 0;
	struct usl_rbuf r;
	enum l2tp_drop rc;
	struct avp a;
	struct dec d;

	l2tp_msg_clear(m);
	rc = l2tp_msg_decode_header(m, buf, len, has_session0);
	if (rc != L2TP_DROP_NONE)
		return rc;
	memset(&d, 0, sizeof(d));
	d.m = m;
	d.secret = secret;
	d.digest_pos = true;
	usl_rbuf_init(&r, buf + skip + L2TP_CTRL_HDR_LEN, len - skip - L2TP_CTRL_HDR_LEN);
	if (usl_rbuf_left(&r) == 0) {
		m->type = L2TP_MSG_ZLB;
		return m->ver == 3 ? L2TP_DROP_NONE : L2TP_DROP_BAD_VERSION;
	}
	rc = dec_msg_type(&d, &r);
	if (rc != L2TP_DROP_NONE)
		return rc;
	m->type_ok = true;
	while (usl_rbuf_left(&r)) {
		/* the M bit of an AVP whose header is cut short may still be read */
		bool mbit = (buf[skip + L2TP_CTRL_HDR_LEN + r.off] & 0x80) != 0;

		rc = next_avp(&r, &a);
		if (rc != L2TP_DROP_NONE) {
			/* framing lost: nothing after it can be read; M=0: ignored */
			if (mbit)
				note_bad(m, rc, 0);
			break;
		}
		rc = dec_avp(&d, &a);
		if (rc != L2TP_DROP_NONE)
			note_bad(m, rc, a.type);	/* IDs and digests after it still count */
	}
	if (m->bad == L2TP_DROP_NONE)
		note_bad_missing(m);
	return m->bad;
}

/* A required AVP missing on receipt (but for those tolerated) is a problem. */
static void note_bad_missing(struct l2tp_msg *m)
{
	uint64_t lo, hi;

	l2tp_msg_missing_avps(m, &lo, &hi);
	lo &= ~TOLERATED_LO;
	if (lo != 0)
		note_bad(m, L2TP_DROP_MISSING_AVP, (uint16_t)__builtin_ctzll(lo));
	else if (hi != 0)
		note_bad(m, L2TP_DROP_MISSING_AVP, (uint16_t)(64 + __builtin_ctzll(hi)));
}

enum l2tp_drop l2tp_msg_check_required(const struct l2tp_msg *m)
{
	const struct required *r;

	if (m->type > L2TP_MSG_TYPE_MAX)
		return L2TP_DROP_NONE;
	r = &required[m->type];
	if ((m->present & r->lo) != r->lo || (m->present2 & r->hi) != r->hi)
		return L2TP_DROP_MISSING_AVP;
	return L2TP_DROP_NONE;
}

/* ---- encoding ---- */

struct enc {
	struct usl_wbuf w;
	const struct l2tp_msg *m;
	uint64_t hide[2];
	const struct l2tp_secret *secret;
	uint8_t key[L2TP_AUTH_KEY_LEN];
	bool have_key;
};

static int enc_value(const struct l2tp_msg *m, const struct avp_codec *c, struct usl_wbuf *w)
{
	const struct l2tp_bytes *b;
	uint32_t u32;

	switch (c->kind) {
	case V_U16:
		return usl_wbuf_u16(w, *(const uint16_t *)cfield(m, c->off));
	case V_U32:
	case V_U32_NZ:
		u32 = *(const uint32_t *)cfield(m, c->off);
		if (c->kind == V_U32_NZ && u32 == 0)
			return -1;
		return usl_wbuf_u32(w, u32);
	case V_U64:
		return usl_wbuf_u64(w, *(const uint64_t *)cfield(m, c->off));
	case V_BYTES:
		b = cfield(m, c->off);
		if (b->len && b->p == NULL)
			return -1;
		return usl_wbuf_put(w, b->p, b->len);
	case V_CUSTOM:
		return c->enc(m, w);
	default:
		return -1;
	}
}

static void put_avp_hdr(struct usl_wbuf *w, uint16_t flags, size_t len, uint16_t type)
{
	usl_wbuf_u16(w, (uint16_t)(flags | (L2TP_AVP_HDR_LEN + len)));
	usl_wbuf_u16(w, L2TP_VENDOR_IETF);
	usl_wbuf_u16(w, type);
}

/*
 * Hidden subformat (5.3): original length, original value, no padding.
 * Padding would hide the value's length but make our output depend on a
 * random source; the values we hide have well-known lengths anyway.
 */
static int put_hidden(struct enc *e, uint16_t flags, uint16_t type,
		      const uint8_t *v, size_t len)
{
	const struct l2tp_msg *m = e->m;
	const struct l2tp_secret *s = e->secret;
	uint8_t sub[VALUE_MAX];

	if (s == NULL || s->p == NULL || s->len == 0 ||
	    !l2tp_msg_has(m, L2TP_AVP_RANDOM_VECTOR) || HIDDEN_HDR_LEN + len > VALUE_MAX)
		return -1;
	if (m->random_vector.len && m->random_vector.p == NULL)
		return -1;
	if (!e->have_key) {
		l2tp_derive_key(s->p, s->len, L2TP_KEY_ID_HIDE, e->key);
		e->have_key = true;
	}
	usl_put_be16(sub, (uint16_t)len);
	memcpy(sub + HIDDEN_HDR_LEN, v, len);
	if (l2tp_hide(e->key, type, m->random_vector.p, m->random_vector.len,
		      sub, HIDDEN_HDR_LEN + len, false) < 0)
		return -1;
	put_avp_hdr(&e->w, flags | L2TP_AVP_F_H, HIDDEN_HDR_LEN + len, type);
	return usl_wbuf_put(&e->w, sub, HIDDEN_HDR_LEN + len);
}

/* Writes AVP type from m, hidden if asked, after checking the value's size. */
static int put_avp(struct enc *e, uint16_t type)
{
	const struct l2tp_avp_rule *rule = l2tp_avp_rule(type);
	uint16_t flags = (rule->flags & L2TP_AVPR_SEND_M) ? L2TP_AVP_F_M : 0;
	uint8_t val[VALUE_MAX];
	struct usl_wbuf vw;

	usl_wbuf_init(&vw, val, sizeof(val));
	if (enc_value(e->m, &codecs[type], &vw) < 0 || vw.overflow)
		return -1;
	if (vw.len < rule->min_len || vw.len > rule->max_len)
		return -1;
	if (bit_test(e->hide, type)) {
		if (!(rule->flags & L2TP_AVPR_HIDE_OK))
			return -1;
		return put_hidden(e, flags, type, val, vw.len);
	}
	put_avp_hdr(&e->w, flags, vw.len, type);
	return usl_wbuf_put(&e->w, val, vw.len);
}

/* The Failover Session State AVPs after the first, which put_avp() wrote. */
static int put_more_fss(struct enc *e)
{
	const struct l2tp_msg *m = e->m;

	if (bit_test(e->hide, L2TP_AVP_FAILOVER_SESSION))
		return -1;	/* one shared value would not do: never hidden */
	for (unsigned i = 1; i < m->n_fss; i++) {
		put_avp_hdr(&e->w, L2TP_AVP_F_M, 10, L2TP_AVP_FAILOVER_SESSION);
		usl_wbuf_u16(&e->w, 0);
		usl_wbuf_u32(&e->w, m->fss[i].sid);
		usl_wbuf_u32(&e->w, m->fss[i].remote_sid);
	}
	return 0;
}

static int put_digests(struct enc *e)
{
	const struct l2tp_msg *m = e->m;
	unsigned i;
	uint8_t n;

	if (m->n_digests > 2)
		return -1;
	for (i = 0; i < m->n_digests; i++) {
		switch (m->digest[i].type) {
		case L2TP_DIGEST_HMAC_MD5:	n = 16; break;
		case L2TP_DIGEST_HMAC_SHA1:	n = 20; break;
		default:			return -1;
		}
		put_avp_hdr(&e->w, L2TP_AVP_F_M, 1 + n, L2TP_AVP_MESSAGE_DIGEST);
		usl_wbuf_u8(&e->w, m->digest[i].type);
		/* zeroed: l2tp_auth_sign() fills it once the message is complete */
		if (usl_wbuf_reserve(&e->w, n))
			memset(e->w.p + e->w.len - n, 0, n);
	}
	return 0;
}

/* Message Type, Message Digest(s), Random Vector, then the others by type. */
static int put_avps(struct enc *e)
{
	const struct l2tp_msg *m = e->m;
	const struct l2tp_avp_rule *rule;
	unsigned t;

	if (bit_test(e->hide, L2TP_AVP_MESSAGE_TYPE) ||
	    (m->n_digests && bit_test(e->hide, L2TP_AVP_MESSAGE_DIGEST)))
		return -1;
	/* RFC 4951: M=0 on FSQ and FSR, which a peer without failover ignores */
	put_avp_hdr(&e->w, m->type == L2TP_MSG_FSQ || m->type == L2TP_MSG_FSR ? 0 : L2TP_AVP_F_M,
		    2, L2TP_AVP_MESSAGE_TYPE);
	usl_wbuf_u16(&e->w, m->type);
	if (put_digests(e) < 0)
		return -1;
	if (l2tp_msg_has(m, L2TP_AVP_RANDOM_VECTOR) && put_avp(e, L2TP_AVP_RANDOM_VECTOR) < 0)
		return -1;
	for (t = 1; t <= L2TP_AVP_MAX_KNOWN; t++) {
		if (t == L2TP_AVP_RANDOM_VECTOR || t == L2TP_AVP_MESSAGE_DIGEST ||
		    !l2tp_msg_has(m, t))
			continue;
		rule = l2tp_avp_rule((uint16_t)t);
		/* what we only accept from others is never sent */
		if (rule == NULL || (rule->flags & (L2TP_AVPR_IGNORE | L2TP_AVPR_RECV_ONLY)))
			continue;
		if (put_avp(e, (uint16_t)t) < 0)
			return -1;
		if (t == L2TP_AVP_FAILOVER_SESSION && put_more_fss(e) < 0)
			return -1;
	}
	return 0;
}

int l2tp_msg_encode2(const struct l2tp_msg *m, uint8_t *buf, size_t cap, bool with_session0,
		     uint64_t hide_mask, uint64_t hide_mask2, const struct l2tp_secret *secret)
{
	size_t s0 = with_session0 ? L2TP_IP_SESSION0_LEN : 0;
	uint8_t ver = m->ver ? m->ver : 3;
	struct enc e;
	size_t hdr;

	if ((ver != 2 && ver != 3) || (m->type != L2TP_MSG_ZLB && !msg_type_known(m->type)))
		return -1;
	/* an incomplete message is refused here rather than by the peer */
	if (l2tp_msg_check_required(m) != L2TP_DROP_NONE)
		return -1;
	memset(&e, 0, sizeof(e));
	e.m = m;
	e.hide[0] = hide_mask;
	e.hide[1] = hide_mask2;
	e.secret = secret;
	usl_wbuf_init(&e.w, buf, cap < s0 + L2TP_MAX_MSG ? cap : s0 + L2TP_MAX_MSG);
	if (with_session0)
		usl_wbuf_u32(&e.w, 0);
	hdr = e.w.len;
	usl_wbuf_u16(&e.w, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | ver);
	usl_wbuf_u16(&e.w, 0);		/* Length, patched below */
	usl_wbuf_u32(&e.w, m->ccid);
	usl_wbuf_u16(&e.w, m->ns);
	usl_wbuf_u16(&e.w, m->nr);
	if (m->type != L2TP_MSG_ZLB && put_avps(&e) < 0)
		return -1;
	usl_wbuf_patch_u16(&e.w, hdr + 2, (uint16_t)(e.w.len - hdr));
	if (e.w.overflow)
		return -1;
	return (int)e.w.len;
}

int l2tp_msg_encode(const struct l2tp_msg *m, uint8_t *buf, size_t cap, bool with_session0,
		    uint64_t hide_mask, const struct l2tp_secret *secret)
{
	return l2tp_msg_encode2(m, buf, cap, with_session0, hide_mask, 0, secret);
}

void l2tp_msg_set_seq(uint8_t *buf, size_t len, bool with_session0, uint16_t ns, uint16_t nr)
{
	size_t off = with_session0 ? L2TP_IP_SESSION0_LEN : 0;

	if (len < off + L2TP_CTRL_HDR_LEN)
		return;
	usl_put_be16(buf + off + 8, ns);
	usl_put_be16(buf + off + 10, nr);
}

/* ---- names ---- */

static const char *const drop_names[L2TP_DROP__COUNT] = {
	[L2TP_DROP_NONE]			= "none",
	[L2TP_DROP_SHORT_HEADER]		= "short-header",
	[L2TP_DROP_NOT_CONTROL]			= "not-control",
	[L2TP_DROP_BAD_VERSION]			= "bad-version",
	[L2TP_DROP_NO_LENGTH_BIT]		= "no-length-bit",
	[L2TP_DROP_NO_SEQ_BIT]			= "no-seq-bit",
	[L2TP_DROP_RESERVED_BITS]		= "reserved-bits",
	[L2TP_DROP_LENGTH_MISMATCH]		= "length-mismatch",
	[L2TP_DROP_IP_SESSION_NONZERO]		= "ip-session-nonzero",
	[L2TP_DROP_AVP_TOO_SHORT]		= "avp-too-short",
	[L2TP_DROP_AVP_OVERRUN]			= "avp-overrun",
	[L2TP_DROP_FIRST_AVP_NOT_MSG_TYPE]	= "first-avp-not-message-type",
	[L2TP_DROP_UNKNOWN_MSG_TYPE]		= "unknown-message-type",
	[L2TP_DROP_BAD_AVP_LENGTH]		= "bad-avp-length",
	[L2TP_DROP_BAD_AVP_VALUE]		= "bad-avp-value",
	[L2TP_DROP_HIDDEN_NO_RANDOM_VECTOR]	= "hidden-no-random-vector",
	[L2TP_DROP_HIDDEN_NO_SECRET]		= "hidden-no-secret",
	[L2TP_DROP_HIDDEN_BAD_LENGTH]		= "hidden-bad-length",
	[L2TP_DROP_MISSING_AVP]			= "missing-avp",
	[L2TP_DROP_DUPLICATE_AVP]		= "duplicate-avp",
	[L2TP_DROP_ZERO_CCID]			= "zero-ccid",
	[L2TP_DROP_UNKNOWN_CCID]		= "unknown-ccid",
	[L2TP_DROP_NR_INVALID]			= "nr-invalid",
	[L2TP_DROP_DUPLICATE]			= "duplicate",
	[L2TP_DROP_OUT_OF_WINDOW]		= "out-of-window",
	[L2TP_DROP_DIGEST_MISSING]		= "digest-missing",
	[L2TP_DROP_DIGEST_MISMATCH]		= "digest-mismatch",
	[L2TP_DROP_WRONG_STATE]			= "wrong-state",
	[L2TP_DROP_UNKNOWN_SESSION]		= "unknown-session",
	[L2TP_DROP_UNKNOWN_MANDATORY]		= "unknown-mandatory",
	[L2TP_DROP_PEER_REFUSED]		= "peer-refused",
	[L2TP_DROP_LIMIT]			= "limit",
	[L2TP_DROP_TOO_LONG]			= "too-long",
	[L2TP_DROP_WRONG_SOURCE]		= "wrong-source",
	[L2TP_DROP_NO_RESOURCES]		= "no-resources",
};

const char *l2tp_drop_name(enum l2tp_drop d)
{
	if ((unsigned)d >= L2TP_DROP__COUNT || drop_names[d] == NULL)
		return "unknown";
	return drop_names[d];
}

const char *l2tp_msg_type_name(uint16_t type)
{
	/* a few buffers so that one printf can name several unknown types */
	static char bufs[4][16];
	static unsigned next;
	char *b;

	if (type <= L2TP_MSG_TYPE_MAX && msg_names[type])
		return msg_names[type];
	b = bufs[next++ % 4];
	snprintf(b, sizeof(bufs[0]), "type-%u", type);
	return b;
}

static const char *const stopccn_names[] = {
	[L2TP_STOPCCN_NORMAL]		= "general request to clear control connection",
	[L2TP_STOPCCN_GENERAL_ERROR]	= "general error",
	[L2TP_STOPCCN_ALREADY_EXISTS]	= "control connection already exists",
	[L2TP_STOPCCN_NOT_AUTHORIZED]	= "requester not authorized",
	[L2TP_STOPCCN_BAD_VERSION]	= "protocol version not supported",
	[L2TP_STOPCCN_SHUTTING_DOWN]	= "requester shutting down",
	[L2TP_STOPCCN_FSM_ERROR]	= "state machine error or timeout",
};

static const char *const cdn_names[] = {
	[L2TP_CDN_CARRIER_LOST]		= "loss of carrier or circuit",
	[L2TP_CDN_GENERAL_ERROR]	= "general error",
	[L2TP_CDN_ADMIN]		= "administrative",
	[L2TP_CDN_NO_RESOURCES_TEMP]	= "no facilities (temporary)",
	[L2TP_CDN_NO_RESOURCES_PERM]	= "no facilities (permanent)",
	[L2TP_CDN_LOST_TIE_BREAKER]	= "lost tie breaker",
	[L2TP_CDN_PW_TYPE_UNSUPPORTED]	= "unsupported pseudowire type",
	[L2TP_CDN_SEQ_WITHOUT_L2SS]	= "sequencing required without L2-Specific Sublayer",
	[L2TP_CDN_FSM_ERROR]		= "state machine error or timeout",
};

static const char *const error_names[] = {
	[L2TP_ERR_NONE]			= "no general error",
	[L2TP_ERR_NO_CONTROL_CONNECTION] = "no control connection",
	[L2TP_ERR_BAD_LENGTH]		= "bad length",
	[L2TP_ERR_BAD_VALUE]		= "value out of range",
	[L2TP_ERR_NO_RESOURCES]		= "insufficient resources",
	[L2TP_ERR_BAD_SESSION_ID]	= "invalid session ID",
	[L2TP_ERR_VENDOR]		= "vendor-specific error",
	[L2TP_ERR_TRY_ANOTHER]		= "try another",
	[L2TP_ERR_UNKNOWN_MANDATORY_AVP] = "unknown mandatory AVP",
	[L2TP_ERR_TRY_ANOTHER_DIRECTED]	= "try another directed",
};

static const char *lookup(const char *const *names, size_t n, uint16_t code)
{
	return code < n && names[code] ? names[code] : "unknown";
}

#define LOOKUP(tab, code)	lookup(tab, sizeof(tab) / sizeof(tab[0]), code)

const char *l2tp_stopccn_result_name(uint16_t code)
{
	return LOOKUP(stopccn_names, code);
}

const char *l2tp_cdn_result_name(uint16_t code)
{
	return LOOKUP(cdn_names, code);
}

const char *l2tp_error_code_name(uint16_t code)
{
	return LOOKUP(error_names, code);
}

/* ---- for tools that list what a message holds (l2tpv3-inspect) ---- */

int l2tp_msg_walk_avps(const uint8_t *buf, size_t len, bool has_session0,
		       l2tp_avp_walk_fn fn, void *arg)
{
	size_t skip = (has_session0 ? L2TP_IP_SESSION0_LEN : 0) + L2TP_CTRL_HDR_LEN;
	struct l2tp_avp_view view;
	struct usl_rbuf r;
	struct avp a;
	int n = 0;

	if (len < skip)
		return -1;
	usl_rbuf_init(&r, buf + skip, len - skip);
	while (usl_rbuf_left(&r)) {
		/* the same framing rules as the decoder, so both stop at the same AVP */
		if (next_avp(&r, &a) != L2TP_DROP_NONE)
			return -1;
		view.flags = a.flags;
		view.vendor = a.vendor;
		view.type = a.type;
		view.len = a.len;
		view.v = a.v;
		fn(&view, arg);
		n++;
	}
	return n;
}

void l2tp_msg_missing_avps(const struct l2tp_msg *m, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (m->type > L2TP_MSG_TYPE_MAX)
		return;
	*lo = required[m->type].lo & ~m->present;
	*hi = required[m->type].hi & ~m->present2;
}

/* ---- a one-line description (the daemon's message trace) ---------------- */

struct describe {
	char *out;
	size_t cap, used;
	unsigned n;
};

static void describe_put(struct describe *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void describe_put(struct describe *d, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (d->used + 1 >= d->cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(d->out + d->used, d->cap - d->used, fmt, ap);
	va_end(ap);
	if (k > 0)
		d->used = d->used + (size_t)k < d->cap ? d->used + (size_t)k : d->cap - 1;
}

/* Whether an AVP's value reads as text (names and IDs the operator knows). */
static bool avp_is_text(uint16_t type)
{
	return type == L2TP_AVP_HOST_NAME || type == L2TP_AVP_VENDOR_NAME ||
	       type == L2TP_AVP_REMOTE_END_ID;
}

static void describe_avp(const struct l2tp_avp_view *a, void *arg)
{
	struct describe *d = arg;
	char esc[96];
	uint64_t v = 0;

	describe_put(d, "%s", d->n++ ? ", " : "");
	if (a->vendor != 0) {
		describe_put(d, "vendor %u AVP %u (%u octets)", a->vendor, a->type, a->len);
		return;
	}
	describe_put(d, "%s", l2tp_avp_name(a->type));
	if (a->flags & L2TP_AVP_F_H) {
		describe_put(d, " (hidden)");
	} else if (avp_is_text(a->type)) {
		usl_str_escape(esc, sizeof(esc), a->v, a->len);	/* the peer's words: data */
		describe_put(d, " \"%s\"", esc);
	} else if (a->type == L2TP_AVP_ROUTER_ID && a->len == 4) {
		describe_put(d, " %u.%u.%u.%u", a->v[0], a->v[1], a->v[2], a->v[3]);
	} else if (a->type == L2TP_AVP_PW_CAP_LIST && a->len % 2 == 0) {
		for (unsigned i = 0; i + 1 < a->len && i < 32; i += 2)
			describe_put(d, "%s%u", i ? "," : " ", usl_get_be16(a->v + i));
	} else if (a->len > 0 && a->len <= 8 && a->type != L2TP_AVP_MESSAGE_TYPE) {
		for (unsigned i = 0; i < a->len; i++)
			v = v << 8 | a->v[i];
		describe_put(d, " %llu", (unsigned long long)v);
	} else if (a->len > 8) {
		describe_put(d, " (%u octets)", a->len);
	}
}

size_t l2tp_msg_describe(const uint8_t *buf, size_t len, char *out, size_t cap)
{
	struct describe d = { out, cap, 0, 0 };
	struct l2tp_msg m;
	uint16_t type = L2TP_MSG_ZLB;

	if (cap == 0)
		return 0;
	out[0] = '\0';
	l2tp_msg_clear(&m);
	if (l2tp_msg_decode_header(&m, buf, len, false) != L2TP_DROP_NONE) {
		describe_put(&d, "malformed header (%zu octets)", len);
		return d.used;
	}
	if (len >= L2TP_CTRL_HDR_LEN + 8 && usl_get_be16(buf + L2TP_CTRL_HDR_LEN + 4) == 0 &&
	    usl_get_be16(buf + L2TP_CTRL_HDR_LEN + 2) == L2TP_AVP_MESSAGE_TYPE)
		type = usl_get_be16(buf + L2TP_CTRL_HDR_LEN + 6);
	describe_put(&d, "%s ccid %u Ns %u Nr %u: ", l2tp_msg_type_name(type), m.ccid, m.ns, m.nr);
	if (l2tp_msg_walk_avps(buf, len, false, describe_avp, &d) < 0)
		describe_put(&d, "%sa malformed AVP", d.n ? ", " : "");
	return d.used;
}
