/*
 * src/proto/auth.c - Control Message Authentication (RFC 3931 4.3, 5.4.1)
 * and AVP hiding (5.3), on OpenSSL libcrypto's non-deprecated one-shot
 * HMAC() and EVP_Digest().
 *
 * Digests are computed over one contiguous copy (nonces + message with the
 * digest values zeroed): control messages are small (L2TP_MAX_MSG) and the
 * copy keeps the received buffer const.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "usl/buf.h"
#include "auth.h"

#define MD5_LEN		16
#define SHA1_LEN	20
/* Message Type AVP, then the first Message Digest AVP at a fixed offset (5.4.1) */
#define MSG_TYPE_OFF	L2TP_CTRL_HDR_LEN
#define DIGEST_OFF	(L2TP_CTRL_HDR_LEN + 8)
#define HASH_INPUT_MAX	(2 * L2TP_NONCE_MAX + L2TP_MAX_MSG)

/* One digest to compute: where it goes in the message and its algorithm. */
struct digest_slot {
	size_t off;		/* of the digest octets, from the L2TP header */
	uint8_t type;
	uint8_t len;
};

static const uint8_t empty_key[1];

static int digest_len(uint8_t type)
{
	switch (type) {
	case L2TP_DIGEST_HMAC_MD5:	return MD5_LEN;
	case L2TP_DIGEST_HMAC_SHA1:	return SHA1_LEN;
	default:			return -1;
	}
}

int l2tp_random(void *p, size_t len)
{
	if (len > INT32_MAX)
		return -1;
	return RAND_bytes(p, (int)len) == 1 ? 0 : -1;
}

int l2tp_hmac(enum l2tp_digest_type type, const uint8_t *key, size_t keylen,
	      const uint8_t *data, size_t len, uint8_t out[L2TP_DIGEST_MAX])
{
	const EVP_MD *md = type == L2TP_DIGEST_HMAC_SHA1 ? EVP_sha1() : EVP_md5();
	unsigned int outlen = 0;

	if (digest_len(type) < 0 || keylen > INT32_MAX)
		return -1;
	/* OpenSSL reads a NULL key as "reuse the last one": never pass it */
	if (key == NULL || keylen == 0)
		key = empty_key;
	if (HMAC(md, key, (int)keylen, data, len, out, &outlen) == NULL)
		return -1;
	return (int)outlen;
}

void l2tp_derive_key(const uint8_t *secret, size_t len, uint8_t id,
		     uint8_t key[L2TP_AUTH_KEY_LEN])
{
	uint8_t out[L2TP_DIGEST_MAX];

	/* HMAC-MD5 of one octet cannot fail short of memory exhaustion */
	if (l2tp_hmac(L2TP_DIGEST_HMAC_MD5, secret, len, &id, 1, out) != MD5_LEN)
		memset(out, 0, sizeof(out));
	memcpy(key, out, L2TP_AUTH_KEY_LEN);
}

static int md5(const uint8_t *data, size_t len, uint8_t out[MD5_LEN])
{
	return EVP_Digest(data, len, out, NULL, EVP_md5(), NULL) == 1 ? 0 : -1;
}

/*
 * Known answers (RFC 2202 test case 1, RFC 1321's "abc"): a crypto library
 * that is configured without these algorithms (an OpenSSL configuration
 * that loads no default provider) or computes them wrongly is found at
 * start-up, not as keys derived as zeros and every digest refused.  Run at
 * start-up, it also pays the library's first use (its configuration and
 * algorithm tables: 5 M instructions, tens of ms under emulation), which
 * the first tunnel would pay otherwise.
 */
const char *l2tp_auth_self_test(void)
{
	static const uint8_t hmac_md5[] = {
		0x92, 0x94, 0x72, 0x7a, 0x36, 0x38, 0xbb, 0x1c,
		0x13, 0xf4, 0x8e, 0xf8, 0x15, 0x8b, 0xfc, 0x9d };
	static const uint8_t hmac_sha1[] = {
		0xb6, 0x17, 0x31, 0x86, 0x55, 0x05, 0x72, 0x64, 0xe2, 0x8b,
		0xc0, 0xb6, 0xfb, 0x37, 0x8c, 0x8e, 0xf1, 0x46, 0xbe, 0x00 };
	static const uint8_t md5_abc[] = {
		0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0,
		0xd6, 0x96, 0x3f, 0x7d, 0x28, 0xe1, 0x7f, 0x72 };
	uint8_t key[20], out[L2TP_DIGEST_MAX];

	memset(key, 0x0b, sizeof(key));
	if (l2tp_hmac(L2TP_DIGEST_HMAC_MD5, key, 16, (const uint8_t *)"Hi There", 8, out) != MD5_LEN ||
	    memcmp(out, hmac_md5, MD5_LEN) != 0)
		return "HMAC-MD5";
	if (l2tp_hmac(L2TP_DIGEST_HMAC_SHA1, key, 20, (const uint8_t *)"Hi There", 8, out) !=
	    (int)sizeof(hmac_sha1) || memcmp(out, hmac_sha1, sizeof(hmac_sha1)) != 0)
		return "HMAC-SHA-1";
	if (md5((const uint8_t *)"abc", 3, out) < 0 || memcmp(out, md5_abc, MD5_LEN) != 0)
		return "MD5";
	return NULL;
}

/*
 * RFC 3931 5.3: b1 = MD5(A + S + RV), bi = MD5(S + c(i-1)), ci = pi xor bi.
 * The chain always runs on the ciphertext, so unhiding saves each block's
 * ciphertext before overwriting it.
 */
int l2tp_hide(const uint8_t key[L2TP_AUTH_KEY_LEN], uint16_t attr,
	      const uint8_t *rv, size_t rv_len, uint8_t *buf, size_t len, bool unhide)
{
	uint8_t in[2 + L2TP_AUTH_KEY_LEN + L2TP_AVP_MAX_LEN];
	uint8_t b[MD5_LEN], c[MD5_LEN];
	size_t off, i, n;

	if (rv_len > L2TP_AVP_MAX_LEN)
		return -1;
	usl_put_be16(in, attr);
	memcpy(in + 2, key, L2TP_AUTH_KEY_LEN);
	if (rv_len)
		memcpy(in + 2 + L2TP_AUTH_KEY_LEN, rv, rv_len);
	if (md5(in, 2 + L2TP_AUTH_KEY_LEN + rv_len, b) < 0)
		return -1;
	for (off = 0; off < len; off += MD5_LEN) {
		n = len - off < MD5_LEN ? len - off : MD5_LEN;
		if (off) {
			/* only the last block can be short, so c is full here */
			memcpy(in + 2 + L2TP_AUTH_KEY_LEN, c, MD5_LEN);
			if (md5(in + 2, L2TP_AUTH_KEY_LEN + MD5_LEN, b) < 0)
				return -1;
		}
		for (i = 0; i < n; i++) {
			if (unhide)
				c[i] = buf[off + i];
			buf[off + i] ^= b[i];
			if (!unhide)
				c[i] = buf[off + i];
		}
	}
	return 0;
}

void l2tp_auth_init(struct l2tp_auth *a)
{
	memset(a, 0, sizeof(*a));
}

int l2tp_auth_add_key(struct l2tp_auth *a, enum l2tp_digest_type type,
		      const uint8_t *secret, size_t len)
{
	struct l2tp_auth_key *k;

	if (a->n_keys >= L2TP_AUTH_MAX_KEYS || digest_len(type) < 0)
		return -1;
	k = &a->keys[a->n_keys++];
	k->type = type;
	l2tp_derive_key(secret, len, L2TP_KEY_ID_AUTH, k->key);
	return 0;
}

int l2tp_auth_new_nonce(struct l2tp_auth *a)
{
	if (l2tp_random(a->local_nonce, L2TP_AUTH_NONCE_LEN) < 0)
		return -1;
	a->local_nonce_len = L2TP_AUTH_NONCE_LEN;
	return 0;
}

int l2tp_auth_set_peer_nonce(struct l2tp_auth *a, const struct l2tp_bytes *nonce)
{
	if (nonce->len > L2TP_NONCE_MAX || (nonce->len && nonce->p == NULL))
		return -1;
	if (nonce->len)
		memcpy(a->peer_nonce, nonce->p, nonce->len);
	a->peer_nonce_len = (uint8_t)nonce->len;
	return 0;
}

void l2tp_auth_take_nonces(struct l2tp_auth *a, const struct l2tp_auth *from)
{
	memcpy(a->local_nonce, from->local_nonce, from->local_nonce_len);
	a->local_nonce_len = from->local_nonce_len;
	memcpy(a->peer_nonce, from->peer_nonce, from->peer_nonce_len);
	a->peer_nonce_len = from->peer_nonce_len;
}

void l2tp_auth_prepare(const struct l2tp_auth *a, struct l2tp_msg *m)
{
	unsigned i;

	m->n_digests = a->n_keys;
	for (i = 0; i < a->n_keys; i++) {
		memset(&m->digest[i], 0, sizeof(m->digest[i]));
		m->digest[i].type = a->keys[i].type;
		m->digest[i].len = (uint8_t)digest_len(a->keys[i].type);
	}
}

/*
 * Lays out first + second + msg in in[] and zeroes the digest values, so
 * every HMAC runs on exactly what the peer hashed.  Returns the input
 * length, or 0 when it does not fit or a slot lies outside the message.
 */
static size_t hash_input(uint8_t *in, const uint8_t *first, size_t first_len,
			 const uint8_t *second, size_t second_len,
			 const uint8_t *msg, size_t len,
			 const struct digest_slot *slots, unsigned n)
{
	size_t pre = first_len + second_len;
	unsigned i;

	if (len > L2TP_MAX_MSG || first_len > L2TP_NONCE_MAX || second_len > L2TP_NONCE_MAX)
		return 0;
	if (first_len)
		memcpy(in, first, first_len);
	if (second_len)
		memcpy(in + first_len, second, second_len);
	memcpy(in + pre, msg, len);
	for (i = 0; i < n; i++) {
		if (slots[i].off > len || len - slots[i].off < slots[i].len)
			return 0;
		memset(in + pre + slots[i].off, 0, slots[i].len);
	}
	return pre + len;
}

static bool is_sccrq(const uint8_t *msg, size_t len)
{
	return len >= DIGEST_OFF && usl_get_be16(msg + MSG_TYPE_OFF + 4) == 0 &&
	       usl_get_be16(msg + MSG_TYPE_OFF + 6) == L2TP_MSG_SCCRQ;
}

/* Finds the digest AVPs that must directly follow the Message Type AVP. */
static unsigned find_digests(const uint8_t *msg, size_t len, struct digest_slot *slots)
{
	size_t off = DIGEST_OFF;
	unsigned n = 0;
	uint16_t alen;
	int dlen;

	while (n < 2 && off + L2TP_AVP_HDR_LEN + 1 <= len) {
		alen = usl_get_be16(msg + off) & L2TP_AVP_LEN_MASK;
		if (usl_get_be16(msg + off + 2) != L2TP_VENDOR_IETF ||
		    usl_get_be16(msg + off + 4) != L2TP_AVP_MESSAGE_DIGEST)
			break;
		dlen = digest_len(msg[off + L2TP_AVP_HDR_LEN]);
		if (dlen < 0 || alen != L2TP_AVP_HDR_LEN + 1 + dlen || off + alen > len)
			break;
		slots[n].off = off + L2TP_AVP_HDR_LEN + 1;
		slots[n].type = msg[off + L2TP_AVP_HDR_LEN];
		slots[n].len = (uint8_t)dlen;
		n++;
		off += alen;
	}
	return n;
}

static const struct l2tp_auth_key *key_for(const struct l2tp_auth *a, unsigned i)
{
	return &a->keys[i < a->n_keys ? i : 0];
}

int l2tp_auth_sign(const struct l2tp_auth *a, uint8_t *buf, size_t len, bool with_session0)
{
	uint8_t in[HASH_INPUT_MAX];
	struct digest_slot slots[2];
	uint8_t out[L2TP_DIGEST_MAX];
	size_t skip = with_session0 ? L2TP_IP_SESSION0_LEN : 0;
	const struct l2tp_auth_key *k;
	uint8_t *msg = buf + skip;
	size_t in_len;
	unsigned n, i;
	bool sccrq;

	if (a->n_keys == 0 || len < skip + DIGEST_OFF)
		return -1;
	len -= skip;
	n = find_digests(msg, len, slots);
	if (n == 0)
		return -1;
	sccrq = is_sccrq(msg, len);
	in_len = hash_input(in, sccrq ? NULL : a->local_nonce, sccrq ? 0 : a->local_nonce_len,
			    sccrq ? NULL : a->peer_nonce, sccrq ? 0 : a->peer_nonce_len,
			    msg, len, slots, n);
	if (in_len == 0)
		return -1;
	for (i = 0; i < n; i++) {
		k = key_for(a, i);
		if (k->type != slots[i].type ||
		    l2tp_hmac(k->type, k->key, sizeof(k->key), in, in_len, out) != slots[i].len)
			return -1;
		memcpy(msg + slots[i].off, out, slots[i].len);
	}
	return 0;
}

/* Does digest d verify with any key of its type? */
static bool digest_ok(const struct l2tp_auth *a, const struct l2tp_digest_avp *d,
		      const uint8_t *in, size_t in_len)
{
	uint8_t out[L2TP_DIGEST_MAX];
	unsigned k;

	for (k = 0; k < a->n_keys; k++) {
		if (a->keys[k].type != d->type)
			continue;
		if (l2tp_hmac(d->type, a->keys[k].key, L2TP_AUTH_KEY_LEN, in, in_len, out) != d->len)
			continue;
		if (CRYPTO_memcmp(out, d->value, d->len) == 0)
			return true;
	}
	return false;
}

enum l2tp_drop l2tp_auth_verify(const struct l2tp_auth *a, const struct l2tp_msg *m,
				const uint8_t *buf, size_t len, bool has_session0)
{
	uint8_t in[HASH_INPUT_MAX];
	size_t skip = has_session0 ? L2TP_IP_SESSION0_LEN : 0;
	struct digest_slot slots[2];
	const uint8_t *peer = a->peer_nonce;
	size_t peer_len = a->peer_nonce_len, in_len;
	unsigned i, n = m->n_digests > 2 ? 2 : m->n_digests;

	if (n == 0)
		return L2TP_DROP_DIGEST_MISSING;
	if (len < skip)
		return L2TP_DROP_DIGEST_MISMATCH;
	for (i = 0; i < n; i++) {
		slots[i].off = m->digest[i].value_off;
		slots[i].type = m->digest[i].type;
		slots[i].len = m->digest[i].len;
	}
	/* the SCCRP carries the nonce its digest was computed with */
	if (m->type == L2TP_MSG_SCCRP && l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE)) {
		peer = m->nonce.p;
		peer_len = m->nonce.len;
	}
	if (m->type == L2TP_MSG_SCCRQ)
		peer_len = 0;
	in_len = hash_input(in, peer, peer_len,
			    m->type == L2TP_MSG_SCCRQ ? NULL : a->local_nonce,
			    m->type == L2TP_MSG_SCCRQ ? 0 : a->local_nonce_len,
			    buf + skip, len - skip, slots, n);
	if (in_len == 0)
		return L2TP_DROP_DIGEST_MISMATCH;
	for (i = 0; i < n; i++)
		if (digest_ok(a, &m->digest[i], in, in_len))
			return L2TP_DROP_NONE;
	return L2TP_DROP_DIGEST_MISMATCH;
}
