/*
 * src/proto/msg.h - L2TPv3 control messages: header, decoded form, codec.
 *
 * A control message is decoded into struct l2tp_msg (header fields plus
 * every AVP we understand), and struct l2tp_msg is encoded back into the
 * exact same bytes (round-trip).  Decoding never reads past the buffer;
 * every rejection names a reason from enum l2tp_drop, which callers count.
 *
 * Variable-length values (host name, cookie...) point into the decoded
 * buffer or, for hidden AVPs, into m->scratch: the buffer must outlive m.
 */
#ifndef L2TP_MSG_H
#define L2TP_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "avp.h"

enum l2tp_encap { L2TP_ENCAP_UDP = 0, L2TP_ENCAP_IP = 1 };

#define L2TP_CTRL_HDR_LEN	12	/* flags/ver, length, CCID, Ns, Nr */
#define L2TP_IP_SESSION0_LEN	4	/* zero session ID before the header over IP */
#define L2TP_HDR_T		0x8000
#define L2TP_HDR_L		0x4000
#define L2TP_HDR_S		0x0800
#define L2TP_HDR_VER_MASK	0x000f
#define L2TP_MAX_MSG		4096	/* largest control message we build or accept */

enum l2tp_msg_type {
	L2TP_MSG_ZLB	= 0,	/* no AVPs at all: pure acknowledgement */
	L2TP_MSG_SCCRQ	= 1,
	L2TP_MSG_SCCRP	= 2,
	L2TP_MSG_SCCCN	= 3,
	L2TP_MSG_STOPCCN = 4,
	L2TP_MSG_HELLO	= 6,
	L2TP_MSG_OCRQ	= 7,
	L2TP_MSG_OCRP	= 8,
	L2TP_MSG_OCCN	= 9,
	L2TP_MSG_ICRQ	= 10,
	L2TP_MSG_ICRP	= 11,
	L2TP_MSG_ICCN	= 12,
	L2TP_MSG_CDN	= 14,
	L2TP_MSG_WEN	= 15,
	L2TP_MSG_SLI	= 16,
	L2TP_MSG_ACK	= 20,
	L2TP_MSG_FSQ	= 21,	/* RFC 4951 Failover Session Query */
	L2TP_MSG_FSR	= 22,	/* RFC 4951 Failover Session Response */
	L2TP_MSG_TYPE_MAX = 22,
	/* the RFC 3931 types: the per-type counters a restart's state carries */
	L2TP_MSG_TYPE_SAVED = 20,
};

/* StopCCN result codes (RFC 3931 5.4.2). */
enum l2tp_stopccn_result {
	L2TP_STOPCCN_NORMAL		= 1,
	L2TP_STOPCCN_GENERAL_ERROR	= 2,
	L2TP_STOPCCN_ALREADY_EXISTS	= 3,
	L2TP_STOPCCN_NOT_AUTHORIZED	= 4,
	L2TP_STOPCCN_BAD_VERSION	= 5,
	L2TP_STOPCCN_SHUTTING_DOWN	= 6,
	L2TP_STOPCCN_FSM_ERROR		= 7,
};

/* CDN result codes (RFC 3931 5.4.2, RFC 2661 4.4.2). */
enum l2tp_cdn_result {
	L2TP_CDN_CARRIER_LOST		= 1,
	L2TP_CDN_GENERAL_ERROR		= 2,
	L2TP_CDN_ADMIN			= 3,
	L2TP_CDN_NO_RESOURCES_TEMP	= 4,
	L2TP_CDN_NO_RESOURCES_PERM	= 5,
	L2TP_CDN_LOST_TIE_BREAKER	= 13,
	L2TP_CDN_PW_TYPE_UNSUPPORTED	= 14,
	L2TP_CDN_SEQ_WITHOUT_L2SS	= 15,
	L2TP_CDN_FSM_ERROR		= 16,
};

/* General error codes (RFC 3931 5.4.2). */
enum l2tp_error_code {
	L2TP_ERR_NONE			= 0,
	L2TP_ERR_NO_CONTROL_CONNECTION	= 1,
	L2TP_ERR_BAD_LENGTH		= 2,
	L2TP_ERR_BAD_VALUE		= 3,
	L2TP_ERR_NO_RESOURCES		= 4,
	L2TP_ERR_BAD_SESSION_ID		= 5,
	L2TP_ERR_VENDOR			= 6,
	L2TP_ERR_TRY_ANOTHER		= 7,
	L2TP_ERR_UNKNOWN_MANDATORY_AVP	= 8,
	L2TP_ERR_TRY_ANOTHER_DIRECTED	= 9,
};

/*
 * Why a received packet was rejected.  Each is a counter in the daemon and
 * a line in `l2tpv3ctl stats`; l2tp_drop_name() gives its name.
 */
/* L2-Specific Sublayer types (RFC 3931 5.4.4, 4.6). */
enum {
	L2TP_L2SS_NONE		= 0,
	L2TP_L2SS_DEFAULT	= 1,
};

enum l2tp_drop {
	L2TP_DROP_NONE = 0,
	L2TP_DROP_SHORT_HEADER,		/* fewer bytes than the fixed header */
	L2TP_DROP_NOT_CONTROL,		/* T bit clear (data message) */
	L2TP_DROP_BAD_VERSION,		/* Ver not 3 (nor an acceptable v2 SCCRQ) */
	L2TP_DROP_NO_LENGTH_BIT,	/* L bit clear */
	L2TP_DROP_NO_SEQ_BIT,		/* S bit clear */
	L2TP_DROP_RESERVED_BITS,	/* reserved header bits set (logged, not fatal?) */
	L2TP_DROP_LENGTH_MISMATCH,	/* header Length differs from the datagram */
	L2TP_DROP_IP_SESSION_NONZERO,	/* over IP: leading session ID not zero */
	L2TP_DROP_AVP_TOO_SHORT,	/* AVP length < 6 */
	L2TP_DROP_AVP_OVERRUN,		/* AVP length past the end of the message */
	L2TP_DROP_FIRST_AVP_NOT_MSG_TYPE,
	L2TP_DROP_UNKNOWN_MSG_TYPE,	/* message type not defined (M=1) */
	L2TP_DROP_BAD_AVP_LENGTH,	/* fixed-size AVP of the wrong size */
	L2TP_DROP_BAD_AVP_VALUE,	/* value out of range (e.g. cookie of 3 octets) */
	L2TP_DROP_HIDDEN_NO_RANDOM_VECTOR,
	L2TP_DROP_HIDDEN_NO_SECRET,
	L2TP_DROP_HIDDEN_BAD_LENGTH,	/* decrypted sub-length out of bounds */
	L2TP_DROP_MISSING_AVP,		/* a required AVP for this message type is absent */
	L2TP_DROP_DUPLICATE_AVP,	/* an AVP that may appear once, twice */
	L2TP_DROP_ZERO_CCID,		/* CCID 0 on a message other than SCCRQ */
	L2TP_DROP_UNKNOWN_CCID,		/* no control connection with that CCID */
	L2TP_DROP_NR_INVALID,		/* Nr acknowledges messages never sent */
	L2TP_DROP_DUPLICATE,		/* Ns already received (acknowledged, dropped) */
	L2TP_DROP_OUT_OF_WINDOW,	/* Ns beyond the receive window */
	L2TP_DROP_DIGEST_MISSING,	/* authentication on, no Message Digest */
	L2TP_DROP_DIGEST_MISMATCH,	/* Message Digest does not verify */
	L2TP_DROP_WRONG_STATE,		/* valid message not acceptable in this state */
	L2TP_DROP_UNKNOWN_SESSION,	/* session message for no session we know */
	L2TP_DROP_UNKNOWN_MANDATORY,	/* unrecognised M=1 AVP (answered with StopCCN/CDN) */
	L2TP_DROP_PEER_REFUSED,		/* SCCRQ from a peer the config does not allow */
	L2TP_DROP_LIMIT,		/* a configured limit refused it (max tunnels, half-open) */
	L2TP_DROP_TOO_LONG,		/* datagram longer than any control message */
	L2TP_DROP_WRONG_SOURCE,		/* known CCID, but not from that tunnel's peer address and port */
	L2TP_DROP_NO_RESOURCES,		/* no tunnel could be made for it (descriptor, memory, port) */
	L2TP_DROP__COUNT
};
const char *l2tp_drop_name(enum l2tp_drop d);
const char *l2tp_msg_type_name(uint16_t type);	/* "SCCRQ", ..., "ZLB", "type-N" */
const char *l2tp_stopccn_result_name(uint16_t code);
const char *l2tp_cdn_result_name(uint16_t code);
const char *l2tp_error_code_name(uint16_t code);

#define L2TP_MAX_PW_CAPS	16
/* Failover Session State AVPs per FSQ/FSR: 16 octets each, in a 4,096-octet message */
#define L2TP_MAX_FSS		200

/* Failover Capability flags (RFC 4951) */
#define L2TP_FAILOVER_C		0x0001	/* control channel failover */
#define L2TP_FAILOVER_D		0x0002	/* data channel (sequence number) reset */

/* One Failover Session State AVP: the sender's Session ID, then the recipient's. */
struct l2tp_fss {
	uint32_t sid, remote_sid;
};
#define L2TP_NONCE_MAX		64
#define L2TP_DIGEST_MAX		20	/* SHA-1 */

/* Bit for AVP type t in l2tp_msg.present. */
#define L2TP_AVP_BIT(t)		((uint64_t)1 << ((t) & 63))

struct l2tp_bytes {
	const uint8_t *p;
	uint16_t len;
};

struct l2tp_result {
	uint16_t result;
	uint16_t error;		/* valid when has_error */
	bool has_error;
	struct l2tp_bytes message;	/* optional text (not NUL-terminated) */
};

/* One Message Digest AVP as found in a received message (for verification). */
struct l2tp_digest_avp {
	uint8_t type;		/* 0 = HMAC-MD5, 1 = HMAC-SHA-1 */
	uint8_t len;		/* 16 or 20 */
	uint16_t value_off;	/* offset of the digest bytes from the start of the message */
	uint8_t value[L2TP_DIGEST_MAX];
};

/*
 * The decoded form of a control message.  `present` has a bit per IETF AVP
 * type below 64 (L2TP_AVP_BIT); present2 for types 64..127.  For encoding,
 * the caller fills the fields and sets the bits; the encoder writes AVPs in
 * the canonical order (Message Type, Message Digest(s), Random Vector, then
 * by type), with the M bit set as RFC 3931 section 5.4 asks for each AVP.
 */
struct l2tp_msg {
	/* header */
	uint8_t ver;			/* 3, or 2 for an accepted v2 SCCRQ */
	uint32_t ccid;			/* recipient's Control Connection ID */
	uint16_t ns, nr;
	uint16_t type;			/* enum l2tp_msg_type; L2TP_MSG_ZLB when no AVP */
	bool type_m;			/* M bit seen on the Message Type AVP */
	uint64_t present, present2;

	/* control connection AVPs */
	struct l2tp_result result;		/* 1 */
	uint64_t tie_breaker;			/* 5 */
	uint16_t firmware_rev;			/* 6 */
	struct l2tp_bytes host_name;		/* 7 */
	struct l2tp_bytes vendor_name;		/* 8 */
	uint16_t recv_window;			/* 10 */
	struct l2tp_bytes random_vector;	/* 36 (the last one seen) */
	uint32_t router_id;			/* 60 */
	uint32_t assigned_ccid;			/* 61 */
	uint16_t pw_caps[L2TP_MAX_PW_CAPS];	/* 62 */
	uint8_t n_pw_caps;
	struct l2tp_bytes preferred_language;	/* 72 */
	struct l2tp_bytes nonce;		/* 73 */
	struct l2tp_digest_avp digest[2];	/* 59: at most two (key rollover) */
	uint8_t n_digests;

	/* session AVPs */
	uint32_t serial;			/* 15 */
	uint32_t local_sid;			/* 63 */
	uint32_t remote_sid;			/* 64 */
	uint8_t cookie[8];			/* 65 */
	uint8_t cookie_len;			/* 0, 4 or 8 */
	struct l2tp_bytes remote_end_id;	/* 66 */
	uint16_t pw_type;			/* 68 */
	uint16_t l2ss;				/* 69: 0 none, 1 default */
	uint16_t data_seq;			/* 70: 0 none, 1 non-IP, 2 all */
	uint16_t circuit_status;		/* 71 */
	uint64_t tx_speed, rx_speed;		/* 74/75, or 24/38 widened */
	uint32_t phys_channel_id;		/* 25 */
	uint16_t circuit_errors_reserved;	/* 34 (WEN): kept raw */
	uint32_t crc_errors, framing_errors, hw_overruns, buffer_overruns,
		 timeout_errors, alignment_errors;

	/* failover (RFC 4951) */
	uint16_t failover_flags;		/* 76: L2TP_FAILOVER_C, _D */
	uint32_t recovery_time_ms;		/* 76 */
	uint32_t recover_ccid;			/* 77: the sender's CCID of the old connection */
	uint32_t recover_peer_ccid;		/* 77: the recipient's */
	uint16_t suggested_ns, suggested_nr;	/* 78 */
	uint16_t n_fss;				/* 79: how many of fss[] below */

	/*
	 * Set when an unrecognised IETF or vendor AVP had M=1: the caller must
	 * answer with StopCCN (or CDN for a session message) result 2 error 8.
	 */
	uint16_t unknown_mandatory_vendor;
	uint16_t unknown_mandatory_type;
	bool has_unknown_mandatory;
	unsigned n_skipped;		/* AVPs ignored (unknown M=0, vendor, obsolete v2) */

	/*
	 * A message whose header and Message Type are valid can be
	 * acknowledged even when its AVPs are not (7.1: a malformed message
	 * must never wedge the connection).  type_ok is then set, bad is the
	 * first problem (an AVP with M=1 malformed, a required AVP missing)
	 * and bad_avp its AVP type; l2tp_msg_decode() returns bad.
	 */
	bool type_ok;
	enum l2tp_drop bad;
	uint16_t bad_avp;

	uint16_t scratch_used;		/* of scratch[] below */

	/*
	 * The bulk, 2.6 KB: read only up to n_fss and scratch_used, so
	 * l2tp_msg_clear() leaves it as it is (zeroing it for every message
	 * sent and received cost more than the rest of the message).
	 */
	struct l2tp_fss fss[L2TP_MAX_FSS];	/* 79, in order; more are ignored */
	uint8_t scratch[1024];		/* plaintext of hidden AVPs */
};

/* An empty message: every field zero, fss[] and scratch[] empty. */
static inline void l2tp_msg_clear(struct l2tp_msg *m)
{
	memset(m, 0, offsetof(struct l2tp_msg, fss));
}

static inline bool l2tp_msg_has(const struct l2tp_msg *m, unsigned avp)
{
	return avp < 64 ? (m->present & L2TP_AVP_BIT(avp)) != 0
			: (m->present2 & L2TP_AVP_BIT(avp - 64)) != 0;
}
static inline void l2tp_msg_set(struct l2tp_msg *m, unsigned avp)
{
	if (avp < 64)
		m->present |= L2TP_AVP_BIT(avp);
	else
		m->present2 |= L2TP_AVP_BIT(avp - 64);
}

/* Secret used to hide/unhide AVPs (RFC 3931 5.3); NULL or len 0 when none. */
struct l2tp_secret {
	const uint8_t *p;
	size_t len;
};

/*
 * Decodes one control message.  buf/len start at the L2TP header: for IP
 * encapsulation callers pass what the L2TPIP socket returns (the kernel
 * strips the zero session ID) or set has_session0 to skip and check it.
 * Returns L2TP_DROP_NONE on success.  Checks the header, every AVP's
 * length/flags and the first-AVP rule, unhides hidden AVPs (secret), and
 * the required AVPs for the message type.  Unknown M=1 AVPs do not fail
 * decoding: they set has_unknown_mandatory for the FSM to answer.
 */
enum l2tp_drop l2tp_msg_decode(struct l2tp_msg *m, const uint8_t *buf, size_t len,
			       bool has_session0, const struct l2tp_secret *secret);

/*
 * Only the header (cheap pre-dispatch: CCID lookup before full decode).
 * Fills ver, ccid, ns and nr and nothing else.  Ver=2 passes here when not
 * over IP; l2tp_msg_decode() then accepts it for an SCCRQ only.
 *
 * Notes on l2tp_msg_decode() results:
 *  - L2TP_DROP_UNKNOWN_MSG_TYPE: m->type_m says whether the peer asked for
 *    the connection to be cleared (M=1) or the message ignored (M=0);
 *    ccid/ns/nr are valid for acknowledging it.
 *  - tx_speed/rx_speed: the L2TPv2 4-octet AVPs (24/38) are widened into
 *    them and also set the bits of AVPs 74/75, so test those bits only.
 *  - Cisco draft-era vendor AVPs (vendor 9) and the RFC 2661 AVPs L2TPv3
 *    obsoletes are skipped whatever their M bit; in a Ver=2 SCCRQ every
 *    unrecognised AVP is skipped (4.7.3).
 */
enum l2tp_drop l2tp_msg_decode_header(struct l2tp_msg *m, const uint8_t *buf, size_t len,
				      bool has_session0);

/* The AVPs a message type must carry (RFC 3931 section 6). */
enum l2tp_drop l2tp_msg_check_required(const struct l2tp_msg *m);

/*
 * Encodes m into buf (capacity cap).  Writes the zero session ID first when
 * with_session0.  hide_mask: AVP types (bit per type < 64) to send hidden,
 * needs secret and m->random_vector.  Returns the length, or -1 when cap is
 * too small or a field is invalid.  Message Digest AVPs are written with
 * zeroed values of the right length when m->n_digests > 0 (sign afterwards
 * with l2tp_auth_sign()).
 */
int l2tp_msg_encode(const struct l2tp_msg *m, uint8_t *buf, size_t cap, bool with_session0,
		    uint64_t hide_mask, const struct l2tp_secret *secret);

/*
 * The same, with hide_mask2 for AVP types 64..127 (Remote Session ID,
 * Assigned Cookie, PW Type...).  Both refuse (-1) a message that lacks an
 * AVP l2tp_msg_check_required() asks for, and never send the AVPs we only
 * accept (24, 38) or ignore.  Hidden values are not padded.
 */
int l2tp_msg_encode2(const struct l2tp_msg *m, uint8_t *buf, size_t cap, bool with_session0,
		     uint64_t hide_mask, uint64_t hide_mask2, const struct l2tp_secret *secret);

/*
 * Patches Ns/Nr of an encoded message in place (retransmissions carry the
 * current Nr).  With authentication on, sign again afterwards
 * (l2tp_auth_sign()): the digest covers the header.
 */
void l2tp_msg_set_seq(uint8_t *buf, size_t len, bool with_session0, uint16_t ns, uint16_t nr);

/*
 * For tools that list what a message holds (l2tpv3-inspect): one AVP as it
 * stands on the wire, hidden values still hidden.
 */
struct l2tp_avp_view {
	uint16_t flags;		/* L2TP_AVP_F_M, L2TP_AVP_F_H */
	uint16_t vendor;
	uint16_t type;
	uint16_t len;		/* value length */
	const uint8_t *v;	/* value, inside the caller's buffer */
};

typedef void (*l2tp_avp_walk_fn)(const struct l2tp_avp_view *a, void *arg);

/*
 * Calls fn for every AVP of the control message in buf, in wire order,
 * framed exactly as l2tp_msg_decode() frames them.  buf/len/has_session0 as
 * for l2tp_msg_decode(); the header should have passed
 * l2tp_msg_decode_header().  Returns the number of AVPs, or -1 at the first
 * AVP whose header is malformed (fn has seen the ones before it).
 */
int l2tp_msg_walk_avps(const uint8_t *buf, size_t len, bool has_session0,
		       l2tp_avp_walk_fn fn, void *arg);

/*
 * One line saying what a control message holds (header first, no session
 * ID): its type, CCID, Ns and Nr, then every AVP in wire order with its
 * value when short (numbers, names and IDs escaped as data; hidden ones
 * "(hidden)").  Always NUL-terminated in out; returns the length written.
 */
size_t l2tp_msg_describe(const uint8_t *buf, size_t len, char *out, size_t cap);

/*
 * The AVPs m lacks among those l2tp_msg_check_required() asks of its type,
 * as bits like m->present (lo) and m->present2 (hi): names a MISSING_AVP.
 */
void l2tp_msg_missing_avps(const struct l2tp_msg *m, uint64_t *lo, uint64_t *hi);

#endif
