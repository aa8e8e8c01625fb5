/*
 * tests/unit/wire-oracle-samples.c - a plausible conversation between a
 * LAC (SCCRQ sender) and an LNS with every message type in it, each with
 * the AVPs RFC 3931 section 6 requires and most of those it allows.
 */
#include <string.h>

#include "wire-oracle-samples.h"

static const uint8_t rv[] = { 0x52, 0x56, 0x2d, 0x31, 0x93, 0x42, 0x11, 0x07,
			      0xa5, 0x5a, 0x00, 0xff, 0x10, 0x20, 0x30, 0x40 };
static const uint8_t nonce_lac[] = { 0x6e, 0x6f, 0x6e, 0x63, 0x65, 0x2d, 0x6c, 0x61,
				     0x63, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07 };
static const uint8_t nonce_lns[] = { 0x6e, 0x6f, 0x6e, 0x63, 0x65, 0x2d, 0x6c, 0x6e,
				     0x73, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9 };
static const uint8_t cookie[8] = SAMPLE_COOKIE;

static void bytes(struct l2tp_bytes *b, const void *p, size_t len)
{
	b->p = p;
	b->len = (uint16_t)len;
}

static void str(struct l2tp_bytes *b, const char *s)
{
	bytes(b, s, strlen(s));
}

static void set(struct l2tp_msg *m, unsigned avp)
{
	l2tp_msg_set(m, avp);
}

static void result(struct l2tp_msg *m, uint16_t code, uint16_t error, const char *text)
{
	m->result.result = code;
	m->result.error = error;
	m->result.has_error = true;
	if (text)
		str(&m->result.message, text);
	set(m, L2TP_AVP_RESULT_CODE);
}

static void sids(struct l2tp_msg *m, uint32_t local, uint32_t remote)
{
	m->local_sid = local;
	m->remote_sid = remote;
	set(m, L2TP_AVP_LOCAL_SESSION_ID);
	set(m, L2TP_AVP_REMOTE_SESSION_ID);
}

static void sccrx(struct l2tp_msg *m, const char *host, uint32_t router, uint32_t ccid,
		  const uint8_t *nonce, size_t nonce_len)
{
	str(&m->host_name, host);
	m->router_id = router;
	m->assigned_ccid = ccid;
	m->pw_caps[0] = L2TP_PW_ETH;
	m->pw_caps[1] = L2TP_PW_ETH_VLAN;
	m->pw_caps[2] = L2TP_PW_PPP;
	m->n_pw_caps = 3;
	str(&m->vendor_name, SAMPLE_VENDOR_NAME);
	m->recv_window = 16;
	m->firmware_rev = 0x0100;
	bytes(&m->nonce, nonce, nonce_len);
	set(m, L2TP_AVP_HOST_NAME);
	set(m, L2TP_AVP_ROUTER_ID);
	set(m, L2TP_AVP_ASSIGNED_CCID);
	set(m, L2TP_AVP_PW_CAP_LIST);
	set(m, L2TP_AVP_VENDOR_NAME);
	set(m, L2TP_AVP_RECV_WINDOW_SIZE);
	set(m, L2TP_AVP_FIRMWARE_REVISION);
	set(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE);
}

static void build_sccrq(struct l2tp_msg *m)
{
	sccrx(m, SAMPLE_HOST_NAME, SAMPLE_ROUTER_ID, SAMPLE_CCID_LAC, nonce_lac, sizeof(nonce_lac));
	m->tie_breaker = 0x0123456789abcdefULL;
	str(&m->preferred_language, "en");
	bytes(&m->random_vector, rv, sizeof(rv));
	set(m, L2TP_AVP_TIE_BREAKER);
	set(m, L2TP_AVP_PREFERRED_LANGUAGE);
	set(m, L2TP_AVP_RANDOM_VECTOR);
}

static void build_sccrp(struct l2tp_msg *m)
{
	sccrx(m, "lns1.example.net", 0x0a000002, SAMPLE_CCID_LNS, nonce_lns, sizeof(nonce_lns));
}

static void build_empty(struct l2tp_msg *m)
{
}

/* Session establishment parameters common to ICRQ and OCRQ. */
static void xcrq(struct l2tp_msg *m, uint32_t local)
{
	sids(m, local, 0);	/* the peer's ID is not known yet: 0, but present */
	m->serial = 0x00000001;
	m->pw_type = L2TP_PW_ETH;
	str(&m->remote_end_id, SAMPLE_END_ID);
	m->circuit_status = L2TP_CIRCUIT_ACTIVE | L2TP_CIRCUIT_NEW;
	memcpy(m->cookie, cookie, 8);
	m->cookie_len = 8;
	m->l2ss = 1;
	m->data_seq = 0;
	m->tie_breaker = 0xfedcba9876543210ULL;
	set(m, L2TP_AVP_SERIAL_NUMBER);
	set(m, L2TP_AVP_PW_TYPE);
	set(m, L2TP_AVP_REMOTE_END_ID);
	set(m, L2TP_AVP_CIRCUIT_STATUS);
	set(m, L2TP_AVP_ASSIGNED_COOKIE);
	set(m, L2TP_AVP_L2_SPECIFIC_SUBLAYER);
	set(m, L2TP_AVP_DATA_SEQUENCING);
	set(m, L2TP_AVP_TIE_BREAKER);
}

static void speeds(struct l2tp_msg *m)
{
	m->tx_speed = 10000000000ULL;
	m->rx_speed = 1000000000ULL;
	set(m, L2TP_AVP_TX_CONNECT_SPEED_BPS);
	set(m, L2TP_AVP_RX_CONNECT_SPEED_BPS);
}

static void build_icrq(struct l2tp_msg *m)
{
	xcrq(m, SAMPLE_SID_LAC);
	speeds(m);
	m->phys_channel_id = 42;
	set(m, L2TP_AVP_PHYSICAL_CHANNEL_ID);
}

static void build_icrp(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LNS, SAMPLE_SID_LAC);
	m->circuit_status = L2TP_CIRCUIT_ACTIVE | L2TP_CIRCUIT_NEW;
	memcpy(m->cookie, cookie, 4);
	m->cookie_len = 4;
	m->l2ss = 1;
	m->data_seq = 2;
	set(m, L2TP_AVP_CIRCUIT_STATUS);
	set(m, L2TP_AVP_ASSIGNED_COOKIE);
	set(m, L2TP_AVP_L2_SPECIFIC_SUBLAYER);
	set(m, L2TP_AVP_DATA_SEQUENCING);
}

static void build_iccn(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LAC, SAMPLE_SID_LNS);
	m->l2ss = 1;
	m->circuit_status = L2TP_CIRCUIT_ACTIVE;
	set(m, L2TP_AVP_L2_SPECIFIC_SUBLAYER);
	set(m, L2TP_AVP_CIRCUIT_STATUS);
	speeds(m);
}

static void build_sli(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LNS, SAMPLE_SID_LAC);
	m->circuit_status = 0;		/* circuit down */
	set(m, L2TP_AVP_CIRCUIT_STATUS);
}

static void build_wen(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LAC, SAMPLE_SID_LNS);
	m->crc_errors = 1;
	m->framing_errors = 2;
	m->hw_overruns = 3;
	m->buffer_overruns = 4;
	m->timeout_errors = 5;
	m->alignment_errors = 6;
	set(m, L2TP_AVP_CIRCUIT_ERRORS);
}

static void build_ocrq(struct l2tp_msg *m)
{
	xcrq(m, SAMPLE_SID_LNS + 1);
	m->cookie_len = 0;	/* an empty cookie: no cookie on data packets */
}

static void build_ocrp(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LAC + 1, SAMPLE_SID_LNS + 1);
	m->circuit_status = L2TP_CIRCUIT_ACTIVE | L2TP_CIRCUIT_NEW;
	m->phys_channel_id = 7;
	set(m, L2TP_AVP_CIRCUIT_STATUS);
	set(m, L2TP_AVP_PHYSICAL_CHANNEL_ID);
}

static void build_occn(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LAC + 1, SAMPLE_SID_LNS + 1);
	m->data_seq = 1;
	set(m, L2TP_AVP_DATA_SEQUENCING);
	speeds(m);
}

static void build_cdn(struct l2tp_msg *m)
{
	sids(m, SAMPLE_SID_LNS + 1, SAMPLE_SID_LAC + 1);
	result(m, L2TP_CDN_GENERAL_ERROR, L2TP_ERR_UNKNOWN_MANDATORY_AVP, "AVP 200");
}

static void build_stopccn(struct l2tp_msg *m)
{
	result(m, L2TP_STOPCCN_NORMAL, L2TP_ERR_NONE, "administrative shutdown");
	m->assigned_ccid = SAMPLE_CCID_LAC;
	set(m, L2TP_AVP_ASSIGNED_CCID);
}

/* Ns and Nr follow a lock-step exchange (RFC 3931 B.1); the LAC sent the SCCRQ. */
#define S(t, ns, nr, lac, fn)	{ #t, L2TP_MSG_##t, ns, nr, lac, build_##fn }

const struct sample samples[] = {
	S(SCCRQ, 0, 0, true, sccrq),	S(SCCRP, 0, 1, false, sccrp),
	S(SCCCN, 1, 1, true, empty),	S(ZLB, 1, 2, false, empty),
	S(HELLO, 2, 1, true, empty),	S(ACK, 1, 3, false, empty),
	S(ICRQ, 3, 1, true, icrq),	S(ICRP, 1, 4, false, icrp),
	S(ICCN, 4, 2, true, iccn),	S(SLI, 2, 5, false, sli),
	S(WEN, 5, 3, true, wen),	S(OCRQ, 3, 6, false, ocrq),
	S(OCRP, 6, 4, true, ocrp),	S(OCCN, 7, 4, true, occn),
	S(CDN, 4, 8, false, cdn),	S(STOPCCN, 8, 5, true, stopccn),
};
const unsigned n_samples = sizeof(samples) / sizeof(samples[0]);

void sample_build(unsigned i, struct l2tp_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->ver = 3;
	m->type = samples[i].type;
	m->ns = samples[i].ns;
	m->nr = samples[i].nr;
	/* the recipient's ID; 0 until the SCCRP told the LAC */
	if (samples[i].type != L2TP_MSG_SCCRQ)
		m->ccid = samples[i].from_lac ? SAMPLE_CCID_LNS : SAMPLE_CCID_LAC;
	/* as decoded: the Message Type AVP is there unless it is a ZLB */
	if (samples[i].type != L2TP_MSG_ZLB)
		set(m, L2TP_AVP_MESSAGE_TYPE);
	samples[i].build(m);
}

static bool same_bytes(const struct l2tp_bytes *a, const struct l2tp_bytes *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

#define DIFF(cond, what)	do { if (cond) return what; } while (0)
#define HAS(t)			l2tp_msg_has(a, t)

static const char *diff_header(const struct l2tp_msg *a, const struct l2tp_msg *b)
{
	unsigned i;

	DIFF(a->ver != b->ver, "ver");
	DIFF(a->ccid != b->ccid, "ccid");
	DIFF(a->ns != b->ns || a->nr != b->nr, "ns/nr");
	DIFF(a->type != b->type, "type");
	DIFF(a->present != b->present || a->present2 != b->present2, "present");
	DIFF(a->n_digests != b->n_digests, "n_digests");
	for (i = 0; i < a->n_digests && i < 2; i++)
		DIFF(a->digest[i].type != b->digest[i].type || a->digest[i].len != b->digest[i].len,
		     "digest");
	return NULL;
}

static const char *diff_cc(const struct l2tp_msg *a, const struct l2tp_msg *b)
{
	DIFF(HAS(L2TP_AVP_RESULT_CODE) &&
	     (a->result.result != b->result.result || a->result.has_error != b->result.has_error ||
	      a->result.error != b->result.error ||
	      !same_bytes(&a->result.message, &b->result.message)), "result");
	DIFF(HAS(L2TP_AVP_TIE_BREAKER) && a->tie_breaker != b->tie_breaker, "tie_breaker");
	DIFF(HAS(L2TP_AVP_FIRMWARE_REVISION) && a->firmware_rev != b->firmware_rev, "firmware");
	DIFF(HAS(L2TP_AVP_HOST_NAME) && !same_bytes(&a->host_name, &b->host_name), "host_name");
	DIFF(HAS(L2TP_AVP_VENDOR_NAME) && !same_bytes(&a->vendor_name, &b->vendor_name), "vendor");
	DIFF(HAS(L2TP_AVP_RECV_WINDOW_SIZE) && a->recv_window != b->recv_window, "recv_window");
	DIFF(HAS(L2TP_AVP_RANDOM_VECTOR) && !same_bytes(&a->random_vector, &b->random_vector), "rv");
	DIFF(HAS(L2TP_AVP_ROUTER_ID) && a->router_id != b->router_id, "router_id");
	DIFF(HAS(L2TP_AVP_ASSIGNED_CCID) && a->assigned_ccid != b->assigned_ccid, "assigned_ccid");
	DIFF(HAS(L2TP_AVP_PW_CAP_LIST) && (a->n_pw_caps != b->n_pw_caps ||
	     memcmp(a->pw_caps, b->pw_caps, a->n_pw_caps * sizeof(a->pw_caps[0]))), "pw_caps");
	DIFF(HAS(L2TP_AVP_PREFERRED_LANGUAGE) &&
	     !same_bytes(&a->preferred_language, &b->preferred_language), "language");
	DIFF(HAS(L2TP_AVP_CTRL_MSG_AUTH_NONCE) && !same_bytes(&a->nonce, &b->nonce), "nonce");
	return NULL;
}

static const char *diff_session(const struct l2tp_msg *a, const struct l2tp_msg *b)
{
	DIFF(HAS(L2TP_AVP_SERIAL_NUMBER) && a->serial != b->serial, "serial");
	DIFF(HAS(L2TP_AVP_LOCAL_SESSION_ID) && a->local_sid != b->local_sid, "local_sid");
	DIFF(HAS(L2TP_AVP_REMOTE_SESSION_ID) && a->remote_sid != b->remote_sid, "remote_sid");
	DIFF(HAS(L2TP_AVP_ASSIGNED_COOKIE) && (a->cookie_len != b->cookie_len ||
	     memcmp(a->cookie, b->cookie, a->cookie_len)), "cookie");
	DIFF(HAS(L2TP_AVP_REMOTE_END_ID) && !same_bytes(&a->remote_end_id, &b->remote_end_id),
	     "remote_end_id");
	DIFF(HAS(L2TP_AVP_PW_TYPE) && a->pw_type != b->pw_type, "pw_type");
	DIFF(HAS(L2TP_AVP_L2_SPECIFIC_SUBLAYER) && a->l2ss != b->l2ss, "l2ss");
	DIFF(HAS(L2TP_AVP_DATA_SEQUENCING) && a->data_seq != b->data_seq, "data_seq");
	DIFF(HAS(L2TP_AVP_CIRCUIT_STATUS) && a->circuit_status != b->circuit_status, "circuit");
	DIFF(HAS(L2TP_AVP_TX_CONNECT_SPEED_BPS) && a->tx_speed != b->tx_speed, "tx_speed");
	DIFF(HAS(L2TP_AVP_RX_CONNECT_SPEED_BPS) && a->rx_speed != b->rx_speed, "rx_speed");
	DIFF(HAS(L2TP_AVP_PHYSICAL_CHANNEL_ID) && a->phys_channel_id != b->phys_channel_id,
	     "phys_channel_id");
	DIFF(HAS(L2TP_AVP_CIRCUIT_ERRORS) &&
	     (a->circuit_errors_reserved != b->circuit_errors_reserved ||
	      a->crc_errors != b->crc_errors || a->framing_errors != b->framing_errors ||
	      a->hw_overruns != b->hw_overruns || a->buffer_overruns != b->buffer_overruns ||
	      a->timeout_errors != b->timeout_errors ||
	      a->alignment_errors != b->alignment_errors), "circuit_errors");
	return NULL;
}

const char *sample_msg_diff(const struct l2tp_msg *a, const struct l2tp_msg *b)
{
	const char *why = diff_header(a, b);

	if (why == NULL)
		why = diff_cc(a, b);
	if (why == NULL)
		why = diff_session(a, b);
	return why;
}
