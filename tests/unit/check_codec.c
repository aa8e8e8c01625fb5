/*
 * tests/unit/check_codec.c - the control message codec on well-formed
 * messages: every type round trips (decode(encode(m)) == m and
 * encode(decode(bytes)) == bytes), over UDP and over IP, plain and hidden.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "usl/buf.h"
#include "proto/auth.h"
#include "proto/msg.h"
#include "wire-oracle-samples.h"

#define BUF_LEN		(L2TP_MAX_MSG + L2TP_IP_SESSION0_LEN)

static struct l2tp_msg m, d, d2;
static uint8_t buf[BUF_LEN], buf2[BUF_LEN];
static const struct l2tp_secret secret = { (const uint8_t *)"hide-me", 7 };

static int encode(const struct l2tp_msg *msg, uint8_t *out, bool ip)
{
	return l2tp_msg_encode(msg, out, BUF_LEN, ip, 0, NULL);
}

static void assert_same(const struct l2tp_msg *a, const struct l2tp_msg *b)
{
	const char *why = sample_msg_diff(a, b);

	ck_assert_msg(why == NULL, "%s differs in %s", l2tp_msg_type_name(a->type), why);
}

/* _i: sample index * 2 + (over IP) */
START_TEST(test_roundtrip)
{
	unsigned i = (unsigned)_i / 2;
	bool ip = _i % 2;
	int len, len2;

	sample_build(i, &m);
	len = encode(&m, buf, ip);
	ck_assert_msg(len > 0, "%s does not encode", samples[i].name);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, ip, NULL), L2TP_DROP_NONE);
	assert_same(&m, &d);
	ck_assert(!d.has_unknown_mandatory);
	ck_assert_uint_eq(d.n_skipped, 0);

	len2 = encode(&d, buf2, ip);
	ck_assert_int_eq(len2, len);
	ck_assert(memcmp(buf, buf2, (size_t)len) == 0);

	/* the header alone gives the same dispatch fields */
	memset(&d2, 0, sizeof(d2));
	ck_assert_int_eq(l2tp_msg_decode_header(&d2, buf, (size_t)len, ip), L2TP_DROP_NONE);
	ck_assert_uint_eq(d2.ccid, m.ccid);
	ck_assert_uint_eq(d2.ns, m.ns);
	ck_assert_uint_eq(d2.nr, m.nr);
}
END_TEST

/* The header fields on the wire: flags, Length, session ID 0 over IP. */
START_TEST(test_header_layout)
{
	int len;

	sample_build(0, &m);
	len = encode(&m, buf, true);
	ck_assert_int_gt(len, 16);
	ck_assert_uint_eq(usl_get_be32(buf), 0);
	ck_assert_uint_eq(usl_get_be16(buf + 4), 0xc803);
	ck_assert_uint_eq(usl_get_be16(buf + 6), (unsigned)len - 4);

	m.type = L2TP_MSG_ZLB;
	ck_assert_int_eq(encode(&m, buf, false), L2TP_CTRL_HDR_LEN);
	ck_assert_uint_eq(usl_get_be16(buf + 2), L2TP_CTRL_HDR_LEN);
	ck_assert_int_eq(encode(&m, buf, true), L2TP_CTRL_HDR_LEN + L2TP_IP_SESSION0_LEN);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, 16, true, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(d.type, L2TP_MSG_ZLB);
	ck_assert_uint_eq(d.present, 0);
}
END_TEST

/*
 * Decoding into a message used before gives what decoding into a fresh one
 * does: l2tp_msg_clear() leaves fss[] and scratch[] as they were, and
 * nothing may read them past n_fss and scratch_used.
 */
START_TEST(test_decode_into_used)
{
	int len;

	sample_build(_i, &m);
	len = encode(&m, buf, false);
	ck_assert_int_gt(len, 0);
	memset(&d, 0xa5, sizeof(d));
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	assert_same(&m, &d);
	ck_assert_int_eq(encode(&d, buf2, false), len);
	ck_assert(memcmp(buf, buf2, (size_t)len) == 0);
}
END_TEST

/*
 * Canonical order and M bits: Message Type, Message Digest(s), Random
 * Vector, then ascending types, each M as the rules table says.
 */
START_TEST(test_order_and_m_bits)
{
	const struct l2tp_avp_rule *r;
	uint16_t fl, type, prev = 0;
	size_t off;
	int len, n = 0;

	sample_build(_i, &m);
	if (m.type == L2TP_MSG_ZLB)
		return;
	m.n_digests = 2;
	m.digest[0].type = L2TP_DIGEST_HMAC_MD5;
	m.digest[1].type = L2TP_DIGEST_HMAC_SHA1;
	len = encode(&m, buf, false);
	ck_assert_int_gt(len, 0);
	for (off = L2TP_CTRL_HDR_LEN; off < (size_t)len; off += fl & L2TP_AVP_LEN_MASK, n++) {
		fl = usl_get_be16(buf + off);
		type = usl_get_be16(buf + off + 4);
		ck_assert_uint_eq(usl_get_be16(buf + off + 2), 0);
		ck_assert_uint_eq(fl & (L2TP_AVP_F_H | L2TP_AVP_F_RSVD), 0);
		r = l2tp_avp_rule(type);
		ck_assert_ptr_nonnull(r);
		ck_assert_msg(!!(fl & L2TP_AVP_F_M) == !!(r->flags & L2TP_AVPR_SEND_M),
			      "M bit of %s", r->name);
		if (n == 0)
			ck_assert_uint_eq(type, L2TP_AVP_MESSAGE_TYPE);
		else if (n <= 2)
			ck_assert_uint_eq(type, L2TP_AVP_MESSAGE_DIGEST);
		else if (type != L2TP_AVP_RANDOM_VECTOR)
			ck_assert_uint_gt(type, prev);
		if (n > 2 && type != L2TP_AVP_RANDOM_VECTOR)
			prev = type;
	}
	ck_assert_uint_eq(off, (size_t)len);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(d.n_digests, 2);
	ck_assert_uint_eq(d.digest[0].len, 16);
	ck_assert_uint_eq(d.digest[1].len, 20);
	ck_assert_uint_eq(d.digest[0].value_off, L2TP_CTRL_HDR_LEN + 8 + 7);
}
END_TEST

/* Every hideable AVP of a sample hidden, then revealed with the secret. */
START_TEST(test_hidden_roundtrip)
{
	static const uint8_t rv[] = "random-vector-16";
	uint64_t hide[2] = { 0, 0 };
	const struct l2tp_avp_rule *r;
	struct l2tp_secret wrong = { (const uint8_t *)"other", 5 };
	unsigned t, hidden = 0;
	bool ip = _i % 2;
	int len, len2;
	size_t off;

	sample_build((unsigned)_i / 2, &m);
	if (m.type == L2TP_MSG_ZLB)
		return;
	m.random_vector.p = rv;
	m.random_vector.len = sizeof(rv) - 1;
	l2tp_msg_set(&m, L2TP_AVP_RANDOM_VECTOR);
	for (t = 0; t <= L2TP_AVP_MAX_KNOWN; t++) {
		r = l2tp_avp_rule((uint16_t)t);
		if (r && (r->flags & L2TP_AVPR_HIDE_OK) && l2tp_msg_has(&m, t))
			hide[t / 64] |= L2TP_AVP_BIT(t);
	}
	len = l2tp_msg_encode2(&m, buf, sizeof(buf), ip, hide[0], hide[1], &secret);
	ck_assert_int_gt(len, 0);
	for (off = L2TP_CTRL_HDR_LEN + (ip ? 4 : 0); off < (size_t)len;
	     off += usl_get_be16(buf + off) & L2TP_AVP_LEN_MASK)
		hidden += (usl_get_be16(buf + off) & L2TP_AVP_F_H) != 0;
	ck_assert_uint_eq(hidden, (unsigned)__builtin_popcountll(hide[0]) +
			  (unsigned)__builtin_popcountll(hide[1]));

	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, ip, &secret), L2TP_DROP_NONE);
	assert_same(&m, &d);
	ck_assert_uint_le(d.scratch_used, sizeof(d.scratch));

	/* no padding, same random vector: hiding again gives the same bytes */
	len2 = l2tp_msg_encode2(&d, buf2, sizeof(buf2), ip, hide[0], hide[1], &secret);
	ck_assert_int_eq(len2, len);
	ck_assert(memcmp(buf, buf2, (size_t)len) == 0);

	if (hidden) {
		ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, ip, NULL),
				 L2TP_DROP_HIDDEN_NO_SECRET);
		/* a wrong secret must never be read as the right values */
		if (l2tp_msg_decode(&d, buf, (size_t)len, ip, &wrong) == L2TP_DROP_NONE)
			ck_assert_ptr_nonnull(sample_msg_diff(&m, &d));
	}
}
END_TEST

START_TEST(test_hide_refused)
{
	static const uint8_t rv[] = { 1, 2, 3, 4 };
	uint64_t ccid_bit = L2TP_AVP_BIT(L2TP_AVP_ASSIGNED_CCID);

	sample_build(0, &m);		/* SCCRQ, with a Random Vector */
	ck_assert_int_gt(l2tp_msg_encode(&m, buf, sizeof(buf), false, ccid_bit, &secret), 0);
	/* no secret */
	ck_assert_int_eq(l2tp_msg_encode(&m, buf, sizeof(buf), false, ccid_bit, NULL), -1);
	/* not hideable (5.4): Host Name, Router ID, Message Type */
	ck_assert_int_eq(l2tp_msg_encode(&m, buf, sizeof(buf), false,
					 L2TP_AVP_BIT(L2TP_AVP_HOST_NAME), &secret), -1);
	ck_assert_int_eq(l2tp_msg_encode(&m, buf, sizeof(buf), false,
					 L2TP_AVP_BIT(L2TP_AVP_ROUTER_ID), &secret), -1);
	ck_assert_int_eq(l2tp_msg_encode(&m, buf, sizeof(buf), false,
					 L2TP_AVP_BIT(L2TP_AVP_MESSAGE_TYPE), &secret), -1);
	/* no Random Vector to hide with */
	m.present &= ~L2TP_AVP_BIT(L2TP_AVP_RANDOM_VECTOR);
	ck_assert_int_eq(l2tp_msg_encode(&m, buf, sizeof(buf), false, ccid_bit, &secret), -1);
	m.random_vector.p = rv;
	m.random_vector.len = sizeof(rv);
	l2tp_msg_set(&m, L2TP_AVP_RANDOM_VECTOR);
	ck_assert_int_gt(l2tp_msg_encode(&m, buf, sizeof(buf), false, ccid_bit, &secret), 0);
}
END_TEST

/* Every capacity below the length fails without writing past it. */
START_TEST(test_encode_capacity)
{
	uint8_t small[BUF_LEN + 1];
	int len, cap;

	sample_build(6, &m);		/* ICRQ */
	len = encode(&m, buf, true);
	ck_assert_int_gt(len, 0);
	for (cap = 0; cap < len; cap++) {
		memset(small, 0xa5, sizeof(small));
		ck_assert_int_eq(l2tp_msg_encode(&m, small, (size_t)cap, true, 0, NULL), -1);
		ck_assert_uint_eq(small[cap], 0xa5);
	}
	ck_assert_int_eq(l2tp_msg_encode(&m, small, (size_t)len, true, 0, NULL), len);
}
END_TEST

/* What the encoder refuses rather than send. */
START_TEST(test_encode_invalid)
{
	static const uint8_t big[L2TP_NONCE_MAX + 1];

	sample_build(0, &m);
	m.present &= ~L2TP_AVP_BIT(L2TP_AVP_ROUTER_ID);
	ck_assert_int_eq(encode(&m, buf, false), -1);		/* required AVP missing */

	sample_build(0, &m);
	m.assigned_ccid = 0;					/* MUST NOT be 0 */
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(0, &m);
	m.n_pw_caps = 0;
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(0, &m);
	m.host_name.len = 0;					/* at least 1 octet */
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(0, &m);
	m.nonce.p = big;
	m.nonce.len = sizeof(big);
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(0, &m);
	m.vendor_name.p = NULL;
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(6, &m);
	m.cookie_len = 3;
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(6, &m);
	m.present &= ~L2TP_AVP_BIT(L2TP_AVP_SERIAL_NUMBER);
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(6, &m);
	m.n_digests = 3;
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(6, &m);
	m.n_digests = 1;
	m.digest[0].type = 2;
	ck_assert_int_eq(encode(&m, buf, false), -1);

	sample_build(2, &m);
	m.type = 5;						/* reserved */
	ck_assert_int_eq(encode(&m, buf, false), -1);
	m.type = L2TP_MSG_SCCCN;
	m.ver = 1;
	ck_assert_int_eq(encode(&m, buf, false), -1);
}
END_TEST

/* The v2 connect speeds are accepted, read as 74/75, and never sent. */
START_TEST(test_v2_speed_not_sent)
{
	int len;

	sample_build(8, &m);		/* ICCN */
	l2tp_msg_set(&m, L2TP_AVP_TX_CONNECT_SPEED);
	l2tp_msg_set(&m, L2TP_AVP_PROTOCOL_VERSION);
	len = encode(&m, buf, false);
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert(!l2tp_msg_has(&d, L2TP_AVP_TX_CONNECT_SPEED));
	ck_assert(!l2tp_msg_has(&d, L2TP_AVP_PROTOCOL_VERSION));
	ck_assert(l2tp_msg_has(&d, L2TP_AVP_TX_CONNECT_SPEED_BPS));
	ck_assert_uint_eq(d.tx_speed, m.tx_speed);
}
END_TEST

/* An SCCRQ with Ver=2 (automatic fallback, 4.7.3) is accepted over UDP. */
START_TEST(test_v2_sccrq)
{
	int len;

	sample_build(0, &m);
	m.ver = 2;
	len = encode(&m, buf, false);
	ck_assert_int_gt(len, 0);
	ck_assert_uint_eq(buf[1] & 0x0f, 2);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(d.ver, 2);
	assert_same(&m, &d);
}
END_TEST

START_TEST(test_set_seq)
{
	int len;
	bool ip;

	for (ip = false; ; ip = true) {
		sample_build(4, &m);	/* HELLO */
		len = encode(&m, buf, ip);
		l2tp_msg_set_seq(buf, (size_t)len, ip, 0xfffe, 0x1234);
		ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, ip, NULL), L2TP_DROP_NONE);
		ck_assert_uint_eq(d.ns, 0xfffe);
		ck_assert_uint_eq(d.nr, 0x1234);
		ck_assert_uint_eq(d.ccid, m.ccid);
		ck_assert_uint_eq(d.type, L2TP_MSG_HELLO);
		/* too short to hold a header: left alone */
		memcpy(buf2, buf, (size_t)len);
		l2tp_msg_set_seq(buf, (ip ? 4 : 0) + 11, ip, 1, 1);
		ck_assert(memcmp(buf, buf2, (size_t)len) == 0);
		if (ip)
			break;
	}
}
END_TEST

START_TEST(test_names)
{
	static const uint16_t types[] = { 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 20 };
	static const char *const want[] = { "ZLB", "SCCRQ", "SCCRP", "SCCCN", "StopCCN", "HELLO",
		"OCRQ", "OCRP", "OCCN", "ICRQ", "ICRP", "ICCN", "CDN", "WEN", "SLI", "ACK" };
	const char *a, *b;
	unsigned i, j;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		ck_assert_str_eq(l2tp_msg_type_name(types[i]), want[i]);
	a = l2tp_msg_type_name(5);
	b = l2tp_msg_type_name(300);
	ck_assert_str_eq(a, "type-5");
	ck_assert_str_eq(b, "type-300");

	for (i = 0; i < L2TP_DROP__COUNT; i++) {
		ck_assert_str_ne(l2tp_drop_name(i), "unknown");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(l2tp_drop_name(i), l2tp_drop_name(j));
	}
	ck_assert_str_eq(l2tp_drop_name(L2TP_DROP__COUNT), "unknown");
	ck_assert_str_eq(l2tp_drop_name(L2TP_DROP_MISSING_AVP), "missing-avp");

	ck_assert_str_eq(l2tp_avp_name(L2TP_AVP_HOST_NAME), "Host Name");
	ck_assert_str_eq(l2tp_avp_name(L2TP_AVP_ASSIGNED_CCID), "Assigned Control Connection ID");
	ck_assert_ptr_null(l2tp_avp_name(20));
	ck_assert_ptr_null(l2tp_avp_name(67));
	ck_assert_ptr_null(l2tp_avp_name(80));
	ck_assert_str_eq(l2tp_avp_name(76), "Failover Capability");
	ck_assert_str_eq(l2tp_avp_name(79), "Failover Session State");
	ck_assert_str_eq(l2tp_msg_type_name(21), "FSQ");
	ck_assert_str_eq(l2tp_msg_type_name(22), "FSR");
	ck_assert_ptr_null(l2tp_avp_name(0xffff));

	ck_assert_str_eq(l2tp_pw_type_name(L2TP_PW_ETH), "Ethernet");
	ck_assert_str_eq(l2tp_pw_type_name(L2TP_PW_ETH_VLAN), "Ethernet VLAN");
	ck_assert_str_eq(l2tp_pw_type_name(L2TP_PW_PPP), "PPP");
	/* every IANA-registered L2TPv3 pseudowire type has its name */
	ck_assert_str_eq(l2tp_pw_type_name(0x06), "HDLC");
	ck_assert_str_eq(l2tp_pw_type_name(0x01), "Frame Relay DLCI");
	ck_assert_str_eq(l2tp_pw_type_name(0x0c), "MPEG-TS Payload Type (DEPI MPT)");
	ck_assert_str_eq(l2tp_pw_type_name(0x17), "CESoPSN TDM with CAS");
	ck_assert_str_eq(l2tp_pw_type_name(0x16), "unknown");

	ck_assert_str_eq(l2tp_stopccn_result_name(L2TP_STOPCCN_GENERAL_ERROR), "general error");
	ck_assert_str_eq(l2tp_stopccn_result_name(0), "unknown");
	ck_assert_str_eq(l2tp_stopccn_result_name(8), "unknown");
	ck_assert_str_eq(l2tp_cdn_result_name(L2TP_CDN_LOST_TIE_BREAKER), "lost tie breaker");
	ck_assert_str_eq(l2tp_cdn_result_name(6), "unknown");
	ck_assert_str_eq(l2tp_error_code_name(L2TP_ERR_UNKNOWN_MANDATORY_AVP),
			 "unknown mandatory AVP");
	ck_assert_str_eq(l2tp_error_code_name(10), "unknown");
}
END_TEST

/* The rules table against RFC 3931 5.4's fixed lengths and hiding rules. */
START_TEST(test_rules_table)
{
	static const struct {
		uint16_t type, len;
		bool hide_ok;
	} fixed[] = {
		{ 0, 2, false }, { 5, 8, false }, { 10, 2, false }, { 15, 4, true },
		{ 25, 4, true }, { 34, 26, true }, { 60, 4, false }, { 61, 4, true },
		{ 63, 4, true }, { 64, 4, true }, { 68, 2, true }, { 69, 2, true },
		{ 70, 2, true }, { 71, 2, true }, { 74, 8, true }, { 75, 8, true },
	};
	static const uint16_t never_hidden[] = { 0, 1, 5, 7, 10, 36, 59, 60, 73 };
	static const uint16_t ignored[] = { 2, 3, 4, 9, 11, 12, 13, 14, 16, 17, 18, 19, 21, 22,
					    23, 26, 27, 28, 29, 30, 31, 32, 33, 35, 37, 39 };
	const struct l2tp_avp_rule *r;
	unsigned i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		r = l2tp_avp_rule(fixed[i].type);
		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(r->min_len, fixed[i].len);
		ck_assert_uint_eq(r->max_len, fixed[i].len);
		ck_assert_uint_eq(!!(r->flags & L2TP_AVPR_HIDE_OK), fixed[i].hide_ok);
	}
	for (i = 0; i < sizeof(never_hidden) / sizeof(never_hidden[0]); i++)
		ck_assert(!(l2tp_avp_rule(never_hidden[i])->flags & L2TP_AVPR_HIDE_OK));
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		ck_assert(l2tp_avp_rule(ignored[i])->flags & L2TP_AVPR_IGNORE);
	for (i = 0; i <= L2TP_AVP_MAX_KNOWN; i++) {
		r = l2tp_avp_rule((uint16_t)i);
		if (r)
			ck_assert_uint_le(r->max_len, L2TP_AVP_MAX_LEN - L2TP_AVP_HDR_LEN);
	}
	/* 5.4: these SHOULD be sent with M=0 */
	ck_assert(!(l2tp_avp_rule(L2TP_AVP_VENDOR_NAME)->flags & L2TP_AVPR_SEND_M));
	ck_assert(!(l2tp_avp_rule(L2TP_AVP_SERIAL_NUMBER)->flags & L2TP_AVPR_SEND_M));
	ck_assert(!(l2tp_avp_rule(L2TP_AVP_TX_CONNECT_SPEED_BPS)->flags & L2TP_AVPR_SEND_M));
	ck_assert(l2tp_avp_rule(L2TP_AVP_REMOTE_SESSION_ID)->flags & L2TP_AVPR_SEND_M);
	ck_assert(l2tp_avp_vendor_ignored(L2TP_VENDOR_CISCO, 1));
	ck_assert(!l2tp_avp_vendor_ignored(L2TP_VENDOR_CISCO, 12));
	ck_assert(!l2tp_avp_vendor_ignored(L2TP_VENDOR_CABLELABS, 2));
}
END_TEST

/* A message of exactly L2TP_MAX_MSG octets: the largest we build or accept. */
START_TEST(test_max_size)
{
	static uint8_t name[L2TP_AVP_MAX_LEN - L2TP_AVP_HDR_LEN];
	int len;

	memset(name, 'x', sizeof(name));
	sample_build(0, &m);
	m.host_name.p = name;
	m.host_name.len = sizeof(name);
	m.vendor_name.p = name;
	m.vendor_name.len = sizeof(name);
	m.preferred_language.p = name;
	m.preferred_language.len = sizeof(name);
	len = encode(&m, buf, false);
	ck_assert_int_gt(len, 3 * L2TP_AVP_MAX_LEN);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	assert_same(&m, &d);
	/* one more 1 KB value no longer fits in L2TP_MAX_MSG */
	m.random_vector.p = name;
	m.random_vector.len = sizeof(name);
	ck_assert_int_eq(encode(&m, buf, false), -1);
	/* and the value of one AVP cannot exceed 1017 octets */
	m.random_vector.len = 16;
	m.host_name.len = sizeof(name) + 1;
	ck_assert_int_eq(encode(&m, buf, false), -1);
}
END_TEST

static void count_avp(const struct l2tp_avp_view *a, void *arg)
{
	unsigned *n = arg;

	if (*n == 0)
		ck_assert_uint_eq(a->type, L2TP_AVP_MESSAGE_TYPE);
	(*n)++;
}

/* The AVP walk of inspection tools frames AVPs as the decoder does. */
START_TEST(test_walk_and_missing)
{
	uint64_t lo, hi;
	unsigned n = 0;
	int len;

	sample_build(6, &m);		/* ICRQ */
	len = encode(&m, buf, true);
	ck_assert_int_eq(l2tp_msg_walk_avps(buf, (size_t)len, true, count_avp, &n),
			 __builtin_popcountll(m.present) + __builtin_popcountll(m.present2));
	ck_assert_uint_eq(n, (unsigned)(__builtin_popcountll(m.present) +
					 __builtin_popcountll(m.present2)));
	ck_assert_int_eq(l2tp_msg_walk_avps(buf, (size_t)len - 1, true, count_avp, &n), -1);

	l2tp_msg_missing_avps(&m, &lo, &hi);
	ck_assert(lo == 0 && hi == 0);
	m.present2 &= ~L2TP_AVP_BIT(L2TP_AVP_REMOTE_SESSION_ID - 64);
	m.present &= ~L2TP_AVP_BIT(L2TP_AVP_SERIAL_NUMBER);
	l2tp_msg_missing_avps(&m, &lo, &hi);
	ck_assert_uint_eq(lo, L2TP_AVP_BIT(L2TP_AVP_SERIAL_NUMBER));
	ck_assert_uint_eq(hi, L2TP_AVP_BIT(L2TP_AVP_REMOTE_SESSION_ID - 64));
	ck_assert_int_eq(l2tp_msg_check_required(&m), L2TP_DROP_MISSING_AVP);
}
END_TEST

/* Offset of the first AVP of type t in an encoded message, or 0. */
static size_t find_avp(const uint8_t *p, size_t len, uint16_t t)
{
	for (size_t off = L2TP_CTRL_HDR_LEN; off + L2TP_AVP_HDR_LEN <= len;
	     off += usl_get_be16(p + off) & L2TP_AVP_LEN_MASK)
		if (usl_get_be16(p + off + 4) == t)
			return off;
	return 0;
}

/* RFC 4951: the four AVPs' layouts and M bits, FSQ/FSR, and what we accept. */
START_TEST(test_failover_avps)
{
	size_t off;
	int len;

	/* SCCRQ of a recovery connection, and a Failover Capability */
	sample_build(0, &m);
	m.failover_flags = L2TP_FAILOVER_C | L2TP_FAILOVER_D;
	m.recovery_time_ms = 30000;
	l2tp_msg_set(&m, L2TP_AVP_FAILOVER_CAP);
	m.recover_ccid = 0x11223344;
	m.recover_peer_ccid = 0x55667788;
	l2tp_msg_set(&m, L2TP_AVP_TUNNEL_RECOVERY);
	len = encode(&m, buf, false);
	ck_assert_int_gt(len, 0);
	off = find_avp(buf, (size_t)len, L2TP_AVP_FAILOVER_CAP);
	ck_assert_uint_ne(off, 0);
	ck_assert_uint_eq(usl_get_be16(buf + off), 12);			/* M=0, length 12 */
	ck_assert_uint_eq(usl_get_be16(buf + off + 6), 0x0003);		/* D, C */
	ck_assert_uint_eq(usl_get_be32(buf + off + 8), 30000);
	off = find_avp(buf, (size_t)len, L2TP_AVP_TUNNEL_RECOVERY);
	ck_assert_uint_ne(off, 0);
	ck_assert_uint_eq(usl_get_be16(buf + off), L2TP_AVP_F_M | 16);
	ck_assert_uint_eq(usl_get_be16(buf + off + 6), 0);
	ck_assert_uint_eq(usl_get_be32(buf + off + 8), 0x11223344);
	ck_assert_uint_eq(usl_get_be32(buf + off + 12), 0x55667788);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(d.failover_flags, 3);
	ck_assert_uint_eq(d.recovery_time_ms, 30000);
	ck_assert_uint_eq(d.recover_ccid, 0x11223344);
	ck_assert_uint_eq(d.recover_peer_ccid, 0x55667788);

	/* a zero ID in Tunnel Recovery (M=1) makes the message malformed */
	usl_put_be32(buf + off + 8, 0);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL),
			 L2TP_DROP_BAD_AVP_VALUE);

	/* Suggested Control Sequence: 16-bit Ns and Nr; OpenRPD's 32-bit form read too */
	sample_build(1, &m);
	m.suggested_ns = 0xbeef;
	m.suggested_nr = 0x1234;
	l2tp_msg_set(&m, L2TP_AVP_SUGGESTED_CTRL_SEQ);
	len = encode(&m, buf, false);
	off = find_avp(buf, (size_t)len, L2TP_AVP_SUGGESTED_CTRL_SEQ);
	ck_assert_uint_ne(off, 0);
	ck_assert_uint_eq(usl_get_be16(buf + off), 12);
	ck_assert_uint_eq(usl_get_be16(buf + off + 8), 0xbeef);
	ck_assert_uint_eq(usl_get_be16(buf + off + 10), 0x1234);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(d.suggested_ns, 0xbeef);
	ck_assert_uint_eq(d.suggested_nr, 0x1234);
	/* FSQ: Message Type with M=0, one Failover Session State per session, in order */
	memset(&m, 0, sizeof(m));
	m.type = L2TP_MSG_FSQ;
	l2tp_msg_set(&m, L2TP_AVP_MESSAGE_TYPE);
	m.ccid = 7;
	for (unsigned i = 0; i < 3; i++) {
		m.fss[i].sid = 100 + i;
		m.fss[i].remote_sid = 200 + i;
	}
	m.n_fss = 3;
	l2tp_msg_set(&m, L2TP_AVP_FAILOVER_SESSION);
	len = encode(&m, buf, false);
	ck_assert_int_eq(len, L2TP_CTRL_HDR_LEN + 8 + 3 * 16);
	ck_assert_uint_eq(usl_get_be16(buf + L2TP_CTRL_HDR_LEN), 8);	/* M=0 */
	off = find_avp(buf, (size_t)len, L2TP_AVP_FAILOVER_SESSION);
	ck_assert_uint_eq(usl_get_be16(buf + off), L2TP_AVP_F_M | 16);
	ck_assert_uint_eq(usl_get_be32(buf + off + 8), 100);
	ck_assert_uint_eq(usl_get_be32(buf + off + 12), 200);
	ck_assert_int_eq(l2tp_msg_decode(&d, buf, (size_t)len, false, NULL), L2TP_DROP_NONE);
	ck_assert_uint_eq(d.type, L2TP_MSG_FSQ);
	ck_assert(!d.type_m);
	ck_assert_uint_eq(d.n_fss, 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(d.fss[i].sid, 100 + i);
		ck_assert_uint_eq(d.fss[i].remote_sid, 200 + i);
	}
	/* an FSR without any Failover Session State is incomplete */
	m.type = L2TP_MSG_FSR;
	m.n_fss = 0;
	m.present2 = 0;
	ck_assert_int_lt(encode(&m, buf, false), 0);
}
END_TEST

/* OpenRPD writes Suggested Ns and Nr as 32-bit words: read as their low 16 bits. */
START_TEST(test_failover_wide_scs)
{
	uint8_t msg[96];
	size_t n = 0;

	memset(msg, 0, sizeof(msg));
	usl_put_be16(msg, L2TP_HDR_T | L2TP_HDR_L | L2TP_HDR_S | 3);
	usl_put_be32(msg + 4, 9);
	n = L2TP_CTRL_HDR_LEN;
	/* Message Type SCCRP, the four required AVPs, then a 10-octet SCS */
	usl_put_be16(msg + n, L2TP_AVP_F_M | 8); usl_put_be16(msg + n + 4, 0);
	usl_put_be16(msg + n + 6, L2TP_MSG_SCCRP); n += 8;
	usl_put_be16(msg + n, L2TP_AVP_F_M | 7); usl_put_be16(msg + n + 4, L2TP_AVP_HOST_NAME);
	msg[n + 6] = 'x'; n += 7;
	usl_put_be16(msg + n, L2TP_AVP_F_M | 10); usl_put_be16(msg + n + 4, L2TP_AVP_ROUTER_ID);
	usl_put_be32(msg + n + 6, 1); n += 10;
	usl_put_be16(msg + n, L2TP_AVP_F_M | 10); usl_put_be16(msg + n + 4, L2TP_AVP_ASSIGNED_CCID);
	usl_put_be32(msg + n + 6, 5); n += 10;
	usl_put_be16(msg + n, L2TP_AVP_F_M | 8); usl_put_be16(msg + n + 4, L2TP_AVP_PW_CAP_LIST);
	usl_put_be16(msg + n + 6, L2TP_PW_ETH); n += 8;
	usl_put_be16(msg + n, 16); usl_put_be16(msg + n + 4, L2TP_AVP_SUGGESTED_CTRL_SEQ);
	usl_put_be32(msg + n + 8, 0x00010007); usl_put_be32(msg + n + 12, 9); n += 16;
	usl_put_be16(msg + 2, (uint16_t)n);
	ck_assert_int_eq(l2tp_msg_decode(&d, msg, n, false, NULL), L2TP_DROP_NONE);
	ck_assert(l2tp_msg_has(&d, L2TP_AVP_SUGGESTED_CTRL_SEQ));
	ck_assert_uint_eq(d.suggested_ns, 7);
	ck_assert_uint_eq(d.suggested_nr, 9);
}
END_TEST

static Suite *codec_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tcase_create("roundtrip");

	tcase_add_loop_test(tc, test_roundtrip, 0, (int)n_samples * 2);
	tcase_add_test(tc, test_header_layout);
	tcase_add_loop_test(tc, test_order_and_m_bits, 0, (int)n_samples);
	tcase_add_loop_test(tc, test_decode_into_used, 0, (int)n_samples);
	tcase_add_loop_test(tc, test_hidden_roundtrip, 0, (int)n_samples * 2);
	tcase_add_test(tc, test_hide_refused);
	tcase_add_test(tc, test_v2_speed_not_sent);
	tcase_add_test(tc, test_v2_sccrq);
	tcase_add_test(tc, test_set_seq);
	tcase_add_test(tc, test_max_size);
	suite_add_tcase(s, tc);

	tc = tcase_create("encode");
	tcase_add_test(tc, test_encode_capacity);
	tcase_add_test(tc, test_encode_invalid);
	suite_add_tcase(s, tc);

	tc = tcase_create("tables");
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_rules_table);
	tcase_add_test(tc, test_walk_and_missing);
	suite_add_tcase(s, tc);

	tc = tcase_create("failover");
	tcase_add_test(tc, test_failover_avps);
	tcase_add_test(tc, test_failover_wide_scs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(codec_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
