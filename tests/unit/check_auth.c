/*
 * tests/unit/check_auth.c - Control Message Authentication (RFC 3931 4.3,
 * 5.4.1) and the HMAC/hiding primitives.
 *
 * Two LCCEs share a secret: "lac" sends the SCCRQ, "lns" answers.  Each test
 * signs with one side's struct l2tp_auth and verifies with the other's.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proto/auth.h"
#include "proto/msg.h"

#define SECRET		"s3cr3t"
#define SECRET2		"rollover"

static struct l2tp_auth lac, lns;
static struct l2tp_msg msg, dec;
static uint8_t buf[L2TP_MAX_MSG + L2TP_IP_SESSION0_LEN];

static const uint8_t nonce_lac[] = "lac-nonce-0123456789";
static const uint8_t nonce_lns[] = "LNS-NONCE-abcdefghijklmn";

static void hex(const char *s, uint8_t *out, size_t n)
{
	size_t i;

	ck_assert_uint_eq(strlen(s), 2 * n);
	for (i = 0; i < n; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* Both sides keyed with type, nonces already exchanged (after SCCRQ/SCCRP). */
static void setup_pair(enum l2tp_digest_type type)
{
	struct l2tp_bytes n;

	l2tp_auth_init(&lac);
	l2tp_auth_init(&lns);
	ck_assert_int_eq(l2tp_auth_add_key(&lac, type, (const uint8_t *)SECRET, strlen(SECRET)), 0);
	ck_assert_int_eq(l2tp_auth_add_key(&lns, type, (const uint8_t *)SECRET, strlen(SECRET)), 0);
	memcpy(lac.local_nonce, nonce_lac, sizeof(nonce_lac));
	lac.local_nonce_len = sizeof(nonce_lac);
	memcpy(lns.local_nonce, nonce_lns, sizeof(nonce_lns));
	lns.local_nonce_len = sizeof(nonce_lns);
	n.p = nonce_lns;
	n.len = sizeof(nonce_lns);
	ck_assert_int_eq(l2tp_auth_set_peer_nonce(&lac, &n), 0);
	n.p = nonce_lac;
	n.len = sizeof(nonce_lac);
	ck_assert_int_eq(l2tp_auth_set_peer_nonce(&lns, &n), 0);
}

static void build_hello(uint16_t ns, uint16_t nr)
{
	memset(&msg, 0, sizeof(msg));
	msg.type = L2TP_MSG_HELLO;
	msg.ccid = 0x11223344;
	msg.ns = ns;
	msg.nr = nr;
}

static void build_sccrx(uint16_t type, const struct l2tp_auth *a)
{
	static const char host[] = "lcce.example";

	memset(&msg, 0, sizeof(msg));
	msg.type = type;
	msg.ccid = type == L2TP_MSG_SCCRQ ? 0 : 0x0a0b0c0d;
	msg.host_name.p = (const uint8_t *)host;
	msg.host_name.len = sizeof(host) - 1;
	msg.router_id = 0x01020304;
	msg.assigned_ccid = 0x55667788;
	msg.pw_caps[0] = L2TP_PW_ETH;
	msg.n_pw_caps = 1;
	msg.nonce.p = a->local_nonce;
	msg.nonce.len = a->local_nonce_len;
	l2tp_msg_set(&msg, L2TP_AVP_HOST_NAME);
	l2tp_msg_set(&msg, L2TP_AVP_ROUTER_ID);
	l2tp_msg_set(&msg, L2TP_AVP_ASSIGNED_CCID);
	l2tp_msg_set(&msg, L2TP_AVP_PW_CAP_LIST);
	l2tp_msg_set(&msg, L2TP_AVP_CTRL_MSG_AUTH_NONCE);
}

/* Encodes msg with from's digests and signs it. */
static int send_signed(const struct l2tp_auth *from, bool ip)
{
	int len;

	l2tp_auth_prepare(from, &msg);
	len = l2tp_msg_encode(&msg, buf, sizeof(buf), ip, 0, NULL);
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(l2tp_auth_sign(from, buf, (size_t)len, ip), 0);
	return len;
}

static enum l2tp_drop receive(const struct l2tp_auth *to, int len, bool ip)
{
	enum l2tp_drop rc = l2tp_msg_decode(&dec, buf, (size_t)len, ip, NULL);

	ck_assert_msg(rc == L2TP_DROP_NONE, "decode: %s", l2tp_drop_name(rc));
	return l2tp_auth_verify(to, &dec, buf, (size_t)len, ip);
}

/* encode(decode(bytes)) signed again by the sender gives the same bytes. */
static void assert_reencodes(const struct l2tp_auth *from, int len, bool ip)
{
	uint8_t again[sizeof(buf)];
	int len2;

	len2 = l2tp_msg_encode(&dec, again, sizeof(again), ip, 0, NULL);
	ck_assert_int_eq(len2, len);
	ck_assert_int_eq(l2tp_auth_sign(from, again, (size_t)len2, ip), 0);
	ck_assert(memcmp(again, buf, (size_t)len) == 0);
}

/* RFC 2202 section 2 and 3, test cases 1, 2, 3 and 6. */
struct kat {
	enum l2tp_digest_type type;
	uint8_t key_byte;	/* key of key_len times this, or "Jefe" when 0 */
	size_t key_len;
	const char *data;	/* NULL: 50 times 0xdd */
	const char *digest;
};

static const struct kat kats[] = {
	{ L2TP_DIGEST_HMAC_MD5, 0x0b, 16, "Hi There", "9294727a3638bb1c13f48ef8158bfc9d" },
	{ L2TP_DIGEST_HMAC_MD5, 0, 4, "what do ya want for nothing?",
	  "750c783e6ab0b503eaa86e310a5db738" },
	{ L2TP_DIGEST_HMAC_MD5, 0xaa, 16, NULL, "56be34521d144c88dbb8c733f0e8b3f6" },
	{ L2TP_DIGEST_HMAC_MD5, 0xaa, 80, "Test Using Larger Than Block-Size Key - Hash Key First",
	  "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd" },
	{ L2TP_DIGEST_HMAC_SHA1, 0x0b, 20, "Hi There", "b617318655057264e28bc0b6fb378c8ef146be00" },
	{ L2TP_DIGEST_HMAC_SHA1, 0, 4, "what do ya want for nothing?",
	  "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" },
	{ L2TP_DIGEST_HMAC_SHA1, 0xaa, 20, NULL, "125d7342b9ac11cd91a39af48aa17b4f63f175d3" },
	{ L2TP_DIGEST_HMAC_SHA1, 0xaa, 80, "Test Using Larger Than Block-Size Key - Hash Key First",
	  "aa4ae5e15272d00e95705637ce8a3b55ed402112" },
};

START_TEST(test_hmac_rfc2202)
{
	const struct kat *k = &kats[_i];
	uint8_t key[80], data[50], want[L2TP_DIGEST_MAX], out[L2TP_DIGEST_MAX];
	size_t dlen = k->type == L2TP_DIGEST_HMAC_MD5 ? 16 : 20, len;
	const uint8_t *d = data;

	if (k->key_byte)
		memset(key, k->key_byte, k->key_len);
	else
		memcpy(key, "Jefe", 4);
	if (k->data) {
		d = (const uint8_t *)k->data;
		len = strlen(k->data);
	} else {
		memset(data, 0xdd, sizeof(data));
		len = sizeof(data);
	}
	hex(k->digest, want, dlen);
	ck_assert_int_eq(l2tp_hmac(k->type, key, k->key_len, d, len, out), (int)dlen);
	ck_assert(memcmp(out, want, dlen) == 0);
}
END_TEST

/* The daemon's start-up check passes on a working library (basic.sh: and stops one without MD5). */
START_TEST(test_self_test)
{
	ck_assert_ptr_null(l2tp_auth_self_test());
}
END_TEST

/* shared_key = HMAC_MD5(secret, id): the two ids must give two keys. */
START_TEST(test_derive_key)
{
	uint8_t k1[L2TP_AUTH_KEY_LEN], k2[L2TP_AUTH_KEY_LEN], ref[L2TP_DIGEST_MAX];
	const uint8_t one = 1;

	l2tp_derive_key((const uint8_t *)SECRET, strlen(SECRET), L2TP_KEY_ID_HIDE, k1);
	l2tp_derive_key((const uint8_t *)SECRET, strlen(SECRET), L2TP_KEY_ID_AUTH, k2);
	ck_assert(memcmp(k1, k2, sizeof(k1)) != 0);
	l2tp_hmac(L2TP_DIGEST_HMAC_MD5, (const uint8_t *)SECRET, strlen(SECRET), &one, 1, ref);
	ck_assert(memcmp(k1, ref, sizeof(k1)) == 0);
	/* the empty secret of the "integrity check only" mode is a valid key */
	l2tp_derive_key(NULL, 0, L2TP_KEY_ID_AUTH, k1);
	l2tp_derive_key((const uint8_t *)"", 0, L2TP_KEY_ID_AUTH, k2);
	ck_assert(memcmp(k1, k2, sizeof(k1)) == 0);
}
END_TEST

START_TEST(test_nonce)
{
	struct l2tp_auth a, b;
	uint8_t long_nonce[L2TP_NONCE_MAX + 1] = { 0 };
	struct l2tp_bytes n = { long_nonce, sizeof(long_nonce) };

	l2tp_auth_init(&a);
	l2tp_auth_init(&b);
	ck_assert_int_eq(l2tp_auth_new_nonce(&a), 0);
	ck_assert_int_eq(l2tp_auth_new_nonce(&b), 0);
	ck_assert_uint_ge(a.local_nonce_len, 16);
	ck_assert(memcmp(a.local_nonce, b.local_nonce, a.local_nonce_len) != 0);
	ck_assert_int_eq(l2tp_auth_set_peer_nonce(&a, &n), -1);
	n.len = L2TP_NONCE_MAX;
	ck_assert_int_eq(l2tp_auth_set_peer_nonce(&a, &n), 0);
	ck_assert_uint_eq(a.peer_nonce_len, L2TP_NONCE_MAX);
}
END_TEST

/* HELLO both ways, UDP and IP, MD5 (_i = 0) and SHA-1 (_i = 1). */
START_TEST(test_sign_verify)
{
	enum l2tp_digest_type type = _i ? L2TP_DIGEST_HMAC_SHA1 : L2TP_DIGEST_HMAC_MD5;
	int len;
	bool ip;

	setup_pair(type);
	for (ip = false; ; ip = true) {
		build_hello(3, 4);
		len = send_signed(&lac, ip);
		ck_assert_int_eq(receive(&lns, len, ip), L2TP_DROP_NONE);
		ck_assert_uint_eq(dec.n_digests, 1);
		ck_assert_uint_eq(dec.digest[0].type, type);
		/* the sender's own view (nonces not reversed) must not verify */
		ck_assert_int_eq(l2tp_auth_verify(&lac, &dec, buf, (size_t)len, ip),
				 L2TP_DROP_DIGEST_MISMATCH);
		assert_reencodes(&lac, len, ip);

		build_hello(9, 10);
		len = send_signed(&lns, ip);
		ck_assert_int_eq(receive(&lac, len, ip), L2TP_DROP_NONE);
		if (ip)
			break;
	}
}
END_TEST

/* SCCRQ: over the message only; SCCRP: the peer nonce is in the message. */
START_TEST(test_sccrq_sccrp)
{
	struct l2tp_auth a, b;
	int len;

	l2tp_auth_init(&a);
	l2tp_auth_init(&b);
	l2tp_auth_add_key(&a, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)SECRET, strlen(SECRET));
	l2tp_auth_add_key(&b, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)SECRET, strlen(SECRET));
	ck_assert_int_eq(l2tp_auth_new_nonce(&a), 0);
	ck_assert_int_eq(l2tp_auth_new_nonce(&b), 0);

	build_sccrx(L2TP_MSG_SCCRQ, &a);
	len = send_signed(&a, false);
	/* b knows no nonce yet and needs none */
	ck_assert_int_eq(receive(&b, len, false), L2TP_DROP_NONE);
	assert_reencodes(&a, len, false);
	ck_assert_int_eq(l2tp_auth_set_peer_nonce(&b, &dec.nonce), 0);

	build_sccrx(L2TP_MSG_SCCRP, &b);
	len = send_signed(&b, false);
	/* a has not stored b's nonce: verify takes it from the SCCRP */
	ck_assert_uint_eq(a.peer_nonce_len, 0);
	ck_assert_int_eq(receive(&a, len, false), L2TP_DROP_NONE);
	ck_assert_int_eq(l2tp_auth_set_peer_nonce(&a, &dec.nonce), 0);

	build_hello(1, 1);
	len = send_signed(&a, false);
	ck_assert_int_eq(receive(&b, len, false), L2TP_DROP_NONE);
}
END_TEST

/* Any single flipped bit is either malformed or fails the digest. */
START_TEST(test_flipped_bit)
{
	enum l2tp_drop rc;
	int len, i, bit;

	setup_pair(_i ? L2TP_DIGEST_HMAC_SHA1 : L2TP_DIGEST_HMAC_MD5);
	build_hello(5, 6);
	len = send_signed(&lac, true);
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1 << bit);
			rc = l2tp_msg_decode(&dec, buf, (size_t)len, true, NULL);
			if (rc == L2TP_DROP_NONE && dec.n_digests)
				ck_assert_msg(l2tp_auth_verify(&lns, &dec, buf, (size_t)len, true) ==
					      L2TP_DROP_DIGEST_MISMATCH, "byte %d bit %d", i, bit);
			buf[i] ^= (uint8_t)(1 << bit);
		}
	}
	ck_assert_int_eq(receive(&lns, len, true), L2TP_DROP_NONE);
}
END_TEST

START_TEST(test_wrong_secret_or_nonce)
{
	struct l2tp_auth other;
	int len;

	setup_pair(L2TP_DIGEST_HMAC_MD5);
	build_hello(0, 0);
	len = send_signed(&lac, false);

	other = lns;
	l2tp_auth_init(&other);
	l2tp_auth_add_key(&other, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)"wrong", 5);
	memcpy(other.local_nonce, lns.local_nonce, lns.local_nonce_len);
	other.local_nonce_len = lns.local_nonce_len;
	memcpy(other.peer_nonce, lns.peer_nonce, lns.peer_nonce_len);
	other.peer_nonce_len = lns.peer_nonce_len;
	ck_assert_int_eq(receive(&other, len, false), L2TP_DROP_DIGEST_MISMATCH);

	other = lns;
	other.peer_nonce[0] ^= 1;
	ck_assert_int_eq(receive(&other, len, false), L2TP_DROP_DIGEST_MISMATCH);

	/* a key of the other algorithm cannot verify it either */
	other = lns;
	other.keys[0].type = L2TP_DIGEST_HMAC_SHA1;
	ck_assert_int_eq(receive(&other, len, false), L2TP_DROP_DIGEST_MISMATCH);

	/* no key at all */
	other = lns;
	other.n_keys = 0;
	ck_assert_int_eq(receive(&other, len, false), L2TP_DROP_DIGEST_MISMATCH);
}
END_TEST

START_TEST(test_digest_missing)
{
	int len;

	setup_pair(L2TP_DIGEST_HMAC_MD5);
	build_hello(0, 0);
	len = l2tp_msg_encode(&msg, buf, sizeof(buf), false, 0, NULL);
	ck_assert_int_gt(len, 0);
	/* nothing to sign into */
	ck_assert_int_eq(l2tp_auth_sign(&lac, buf, (size_t)len, false), -1);
	ck_assert_int_eq(receive(&lns, len, false), L2TP_DROP_DIGEST_MISSING);
}
END_TEST

/*
 * Rollover (5.4.1): the sender has the new secret (SHA-1) and the old one
 * (MD5) and sends two digests; a receiver with either secret accepts.
 */
START_TEST(test_rollover)
{
	struct l2tp_auth both, old_only, new_only, neither;
	int len;

	setup_pair(L2TP_DIGEST_HMAC_MD5);
	both = lac;
	both.n_keys = 0;
	l2tp_auth_add_key(&both, L2TP_DIGEST_HMAC_SHA1, (const uint8_t *)SECRET2, strlen(SECRET2));
	l2tp_auth_add_key(&both, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)SECRET, strlen(SECRET));
	ck_assert_int_eq(l2tp_auth_add_key(&both, L2TP_DIGEST_HMAC_MD5, NULL, 0), -1);

	build_hello(7, 8);
	len = send_signed(&both, false);

	old_only = lns;
	ck_assert_int_eq(receive(&old_only, len, false), L2TP_DROP_NONE);
	ck_assert_uint_eq(dec.n_digests, 2);

	new_only = lns;
	new_only.n_keys = 0;
	l2tp_auth_add_key(&new_only, L2TP_DIGEST_HMAC_SHA1, (const uint8_t *)SECRET2, strlen(SECRET2));
	ck_assert_int_eq(receive(&new_only, len, false), L2TP_DROP_NONE);

	neither = lns;
	neither.n_keys = 0;
	l2tp_auth_add_key(&neither, L2TP_DIGEST_HMAC_SHA1, (const uint8_t *)SECRET, strlen(SECRET));
	ck_assert_int_eq(receive(&neither, len, false), L2TP_DROP_DIGEST_MISMATCH);

	/* corrupting the first digest leaves the second to verify */
	buf[L2TP_CTRL_HDR_LEN + 8 + L2TP_AVP_HDR_LEN + 1] ^= 0x80;
	ck_assert_int_eq(receive(&old_only, len, false), L2TP_DROP_NONE);
	ck_assert_int_eq(receive(&new_only, len, false), L2TP_DROP_DIGEST_MISMATCH);
}
END_TEST

/* A retransmission with a new Nr must be signed again. */
START_TEST(test_resign_after_set_seq)
{
	int len;

	setup_pair(L2TP_DIGEST_HMAC_MD5);
	build_hello(1, 2);
	len = send_signed(&lac, true);
	l2tp_msg_set_seq(buf, (size_t)len, true, 1, 3);
	ck_assert_int_eq(receive(&lns, len, true), L2TP_DROP_DIGEST_MISMATCH);
	ck_assert_int_eq(l2tp_auth_sign(&lac, buf, (size_t)len, true), 0);
	ck_assert_int_eq(receive(&lns, len, true), L2TP_DROP_NONE);
	ck_assert_uint_eq(dec.nr, 3);
}
END_TEST

/* 4.3: with authentication off, a digest with empty secret and nonces. */
START_TEST(test_integrity_only)
{
	struct l2tp_auth a, b;
	int len;

	l2tp_auth_init(&a);
	l2tp_auth_init(&b);
	l2tp_auth_add_key(&a, L2TP_DIGEST_HMAC_MD5, NULL, 0);
	l2tp_auth_add_key(&b, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)"", 0);
	build_hello(0, 0);
	len = send_signed(&a, false);
	ck_assert_int_eq(receive(&b, len, false), L2TP_DROP_NONE);
}
END_TEST

/* Hiding is its own inverse, for every length around the 16-octet blocks. */
START_TEST(test_hide_roundtrip)
{
	uint8_t key[L2TP_AUTH_KEY_LEN], plain[80], work[80];
	static const uint8_t rv[] = "0123456789abcdef";
	size_t len;

	l2tp_derive_key((const uint8_t *)SECRET, strlen(SECRET), L2TP_KEY_ID_HIDE, key);
	for (len = 0; len < sizeof(plain); len++) {
		memset(plain, 0, sizeof(plain));
		memset(plain, 'a', len);
		memcpy(work, plain, sizeof(work));
		ck_assert_int_eq(l2tp_hide(key, 61, rv, sizeof(rv), work, len, false), 0);
		if (len)
			ck_assert(memcmp(work, plain, len) != 0);
		ck_assert(memcmp(work + len, plain + len, sizeof(work) - len) == 0);
		ck_assert_int_eq(l2tp_hide(key, 61, rv, sizeof(rv), work, len, true), 0);
		ck_assert(memcmp(work, plain, sizeof(work)) == 0);
	}
}
END_TEST

/*
 * The chaining of 5.3 recomputed with plain MD5: hiding zeros yields the
 * key stream itself, c1 = MD5(attr + key + RV), c2 = MD5(key + c1).
 */
START_TEST(test_hide_chaining)
{
	static const uint8_t rv[4] = { 1, 2, 3, 4 };
	uint8_t key[L2TP_AUTH_KEY_LEN], work[20], in[32], b1[16], b2[16];

	memset(key, 0x42, sizeof(key));
	memset(work, 0, sizeof(work));
	ck_assert_int_eq(l2tp_hide(key, 0x0102, rv, sizeof(rv), work, sizeof(work), false), 0);

	in[0] = 0x01;
	in[1] = 0x02;
	memcpy(in + 2, key, 16);
	memcpy(in + 18, rv, 4);
	ck_assert_int_eq(EVP_Digest(in, 22, b1, NULL, EVP_md5(), NULL), 1);
	memcpy(in, key, 16);
	memcpy(in + 16, b1, 16);
	ck_assert_int_eq(EVP_Digest(in, 32, b2, NULL, EVP_md5(), NULL), 1);
	ck_assert(memcmp(work, b1, 16) == 0);
	ck_assert(memcmp(work + 16, b2, 4) == 0);
}
END_TEST

static Suite *auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("hmac");

	tcase_add_loop_test(tc, test_hmac_rfc2202, 0, sizeof(kats) / sizeof(kats[0]));
	tcase_add_test(tc, test_self_test);
	tcase_add_test(tc, test_derive_key);
	tcase_add_test(tc, test_nonce);
	suite_add_tcase(s, tc);

	tc = tcase_create("digest");
	tcase_add_loop_test(tc, test_sign_verify, 0, 2);
	tcase_add_test(tc, test_sccrq_sccrp);
	tcase_add_loop_test(tc, test_flipped_bit, 0, 2);
	tcase_add_test(tc, test_wrong_secret_or_nonce);
	tcase_add_test(tc, test_digest_missing);
	tcase_add_test(tc, test_rollover);
	tcase_add_test(tc, test_resign_after_set_seq);
	tcase_add_test(tc, test_integrity_only);
	suite_add_tcase(s, tc);

	tc = tcase_create("hide");
	tcase_add_test(tc, test_hide_roundtrip);
	tcase_add_test(tc, test_hide_chaining);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(auth_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
