/*
 * src/proto/auth.h - Control Message Authentication (RFC 3931 4.3, 5.4.1)
 * and the keyed primitives AVP hiding needs (5.3).
 *
 * One struct l2tp_auth per control connection holds the derived key(s) and
 * both nonces.  Sending a message:
 *
 *	l2tp_auth_prepare(a, &m);		// Message Digest AVP(s) to reserve
 *	len = l2tp_msg_encode(&m, buf, ...);	// written with zeroed digests
 *	l2tp_auth_sign(a, buf, len, ip);	// fills them in
 *
 * and again l2tp_auth_sign() after every l2tp_msg_set_seq() (a new Nr changes
 * the digest).  Receiving: l2tp_msg_decode(), then l2tp_auth_verify() before
 * any AVP is acted upon; drop the message when it does not return
 * L2TP_DROP_NONE.
 *
 * Nonces: the SCCRQ/SCCRP sender creates its nonce with l2tp_auth_new_nonce()
 * and advertises local_nonce in the Control Message Authentication Nonce AVP;
 * whoever receives an SCCRQ or SCCRP stores m->nonce with
 * l2tp_auth_set_peer_nonce().  Authentication is on iff a nonce was exchanged
 * (4.3); with it off, a key derived from an empty secret and no nonces still
 * gives the optional integrity check.
 */
#ifndef L2TP_AUTH_H
#define L2TP_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "msg.h"

enum l2tp_digest_type {
	L2TP_DIGEST_HMAC_MD5	= 0,	/* 16 octets, MUST */
	L2TP_DIGEST_HMAC_SHA1	= 1,	/* 20 octets, SHOULD */
};

#define L2TP_AUTH_KEY_LEN	16	/* derived keys are HMAC-MD5 outputs */
#define L2TP_AUTH_NONCE_LEN	16	/* what we generate; 4.3 recommends >= 16 */
#define L2TP_AUTH_MAX_KEYS	2	/* current secret + rollover (5.4.1) */

/* The single octet hashed with the secret to derive each key. */
#define L2TP_KEY_ID_HIDE	1	/* 5.3: shared_key = HMAC_MD5(secret, 1) */
#define L2TP_KEY_ID_AUTH	2	/* 5.4.1: shared_key = HMAC_MD5(secret, 2) */

struct l2tp_auth_key {
	uint8_t type;			/* enum l2tp_digest_type */
	uint8_t key[L2TP_AUTH_KEY_LEN];	/* HMAC_MD5(secret, 2) */
};

struct l2tp_auth {
	/* keys[0] signs the first digest AVP, keys[1] (if any) the second */
	struct l2tp_auth_key keys[L2TP_AUTH_MAX_KEYS];
	uint8_t n_keys;
	uint8_t local_nonce[L2TP_NONCE_MAX];	/* ours, sent in our SCCRQ/SCCRP */
	uint8_t local_nonce_len;
	uint8_t peer_nonce[L2TP_NONCE_MAX];	/* theirs, from their SCCRQ/SCCRP */
	uint8_t peer_nonce_len;
};

/* Clears a: no keys, no nonces. */
void l2tp_auth_init(struct l2tp_auth *a);

/*
 * Adds a secret (up to L2TP_AUTH_MAX_KEYS; the first one signs).  An empty
 * secret is valid: it is the "integrity check only" key of 4.3.
 * Returns 0, or -1 when full or the type is unknown.
 */
int l2tp_auth_add_key(struct l2tp_auth *a, enum l2tp_digest_type type,
		      const uint8_t *secret, size_t len);

/* Fills local_nonce with L2TP_AUTH_NONCE_LEN random octets.  0 or -1. */
int l2tp_auth_new_nonce(struct l2tp_auth *a);

/* Stores the peer's nonce (m->nonce of its SCCRQ/SCCRP).  0, or -1 if too long. */
int l2tp_auth_set_peer_nonce(struct l2tp_auth *a, const struct l2tp_bytes *nonce);

/* RFC 4951: a recovered connection signs with its recovery connection's nonces. */
void l2tp_auth_take_nonces(struct l2tp_auth *a, const struct l2tp_auth *from);

/* Sets m->n_digests and each digest's type/len from the keys, for l2tp_msg_encode(). */
void l2tp_auth_prepare(const struct l2tp_auth *a, struct l2tp_msg *m);

/*
 * Computes and writes the Message Digest AVP(s) of an encoded message in
 * place: HMAC(key, local_nonce + peer_nonce + message) with every digest
 * value zeroed, or HMAC(key, message) for an SCCRQ (its nonce is inside).
 * buf/len/with_session0 as given to and returned by l2tp_msg_encode().
 * The digest AVPs must directly follow the Message Type AVP and match the
 * key types (l2tp_auth_prepare()).  Returns 0, or -1 when the message has
 * no such AVPs or there is no key.
 */
int l2tp_auth_sign(const struct l2tp_auth *a, uint8_t *buf, size_t len, bool with_session0);

/*
 * Checks a decoded message (m from l2tp_msg_decode() of the same buf/len).
 * The receiver reverses the nonces: HMAC(key, peer_nonce + local_nonce +
 * message).  An SCCRQ is checked over the message alone; for an SCCRP the
 * peer nonce is taken from m->nonce, since the peer advertises it in that very
 * message.  Accepts when any digest AVP verifies with any key of its type
 * (rollover).  Returns L2TP_DROP_NONE, L2TP_DROP_DIGEST_MISSING (no digest
 * AVP) or L2TP_DROP_DIGEST_MISMATCH.
 */
enum l2tp_drop l2tp_auth_verify(const struct l2tp_auth *a, const struct l2tp_msg *m,
				const uint8_t *buf, size_t len, bool has_session0);

/* Primitives, shared with the AVP codec and the tests. */

/* Cryptographically random octets.  0 or -1. */
int l2tp_random(void *p, size_t len);

/* key = HMAC_MD5(secret, id): id L2TP_KEY_ID_HIDE or L2TP_KEY_ID_AUTH. */
void l2tp_derive_key(const uint8_t *secret, size_t len, uint8_t id,
		     uint8_t key[L2TP_AUTH_KEY_LEN]);

/* Known-answer tests of HMAC-MD5, HMAC-SHA-1 and MD5: NULL, or the one that failed. */
const char *l2tp_auth_self_test(void);

/* HMAC-MD5 or HMAC-SHA-1 of data into out.  Returns the digest length, or -1. */
int l2tp_hmac(enum l2tp_digest_type type, const uint8_t *key, size_t keylen,
	      const uint8_t *data, size_t len, uint8_t out[L2TP_DIGEST_MAX]);

/*
 * Hides (unhide false) or reveals (unhide true) len octets of a hidden AVP
 * subformat in place, RFC 3931 5.3: b1 = MD5(attr + key + rv),
 * bi = MD5(key + c(i-1)).  key is HMAC_MD5(secret, 1).  0 or -1.
 */
int l2tp_hide(const uint8_t key[L2TP_AUTH_KEY_LEN], uint16_t attr,
	      const uint8_t *rv, size_t rv_len, uint8_t *buf, size_t len, bool unhide);

#endif
