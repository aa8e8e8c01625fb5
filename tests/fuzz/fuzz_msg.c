/*
 * tests/fuzz/fuzz_msg.c - libFuzzer target for the control message codec.
 *
 * The first input octet selects the variant (bit 0: over IP with the zero
 * session ID, bit 1: decode with a hiding secret), the rest is the datagram.
 * Whatever decodes must encode and decode again to the same message, and,
 * signed by one end of a connection, verify at the other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/auth.h"
#include "proto/msg.h"
#include "wire-oracle-samples.h"

#define FUZZ_SECRET	"oracle-secret"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The two ends of one control connection: same keys, nonces crossed. */
static struct l2tp_auth lac, lns;
static bool auth_ready;

static void auth_setup(void)
{
	struct l2tp_bytes n;

	l2tp_auth_init(&lac);
	l2tp_auth_add_key(&lac, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)FUZZ_SECRET,
			  strlen(FUZZ_SECRET));
	l2tp_auth_add_key(&lac, L2TP_DIGEST_HMAC_SHA1, NULL, 0);
	lns = lac;
	l2tp_auth_new_nonce(&lac);
	l2tp_auth_new_nonce(&lns);
	n.p = lac.local_nonce;
	n.len = lac.local_nonce_len;
	l2tp_auth_set_peer_nonce(&lns, &n);
	n.p = lns.local_nonce;
	n.len = lns.local_nonce_len;
	l2tp_auth_set_peer_nonce(&lac, &n);
	auth_ready = true;
}

/* decode(encode(m)) == m for anything that decoded. */
static void roundtrip(struct l2tp_msg *m, bool ip)
{
	static uint8_t out[L2TP_MAX_MSG + L2TP_IP_SESSION0_LEN];
	static struct l2tp_msg m2;
	int len;

	/* the v2 speeds are read as 74/75 and sent as such */
	m->present &= ~(L2TP_AVP_BIT(L2TP_AVP_TX_CONNECT_SPEED) |
			L2TP_AVP_BIT(L2TP_AVP_RX_CONNECT_SPEED));
	/* accepted without a Serial Number (real LACs omit it), never sent without */
	if ((m->type == L2TP_MSG_ICRQ || m->type == L2TP_MSG_OCRQ) &&
	    !l2tp_msg_has(m, L2TP_AVP_SERIAL_NUMBER))
		l2tp_msg_set(m, L2TP_AVP_SERIAL_NUMBER);
	len = l2tp_msg_encode(m, out, sizeof(out), ip, 0, NULL);
	if (len < 0)
		abort();	/* decoded but cannot be sent back */
	if (l2tp_msg_decode(&m2, out, (size_t)len, ip, NULL) != L2TP_DROP_NONE)
		abort();	/* our own encoding refused */
	if (sample_msg_diff(m, &m2))
		abort();	/* the round trip changed a field */
}

/* Signed by the LAC, the same message verifies at the LNS. */
static void sign_verify(struct l2tp_msg *m, bool ip)
{
	static uint8_t out[L2TP_MAX_MSG + L2TP_IP_SESSION0_LEN];
	static struct l2tp_msg m2;
	int len;

	if (m->type == L2TP_MSG_ZLB)
		return;
	l2tp_auth_prepare(&lac, m);
	/* an SCCRP's digest is computed with the nonce it carries */
	if (l2tp_msg_has(m, L2TP_AVP_CTRL_MSG_AUTH_NONCE)) {
		m->nonce.p = lac.local_nonce;
		m->nonce.len = lac.local_nonce_len;
	}
	len = l2tp_msg_encode(m, out, sizeof(out), ip, 0, NULL);
	if (len < 0)
		return;		/* the digests no longer fit in L2TP_MAX_MSG */
	if (l2tp_auth_sign(&lac, out, (size_t)len, ip) < 0)
		abort();
	if (l2tp_msg_decode(&m2, out, (size_t)len, ip, NULL) != L2TP_DROP_NONE)
		abort();
	if (l2tp_auth_verify(&lns, &m2, out, (size_t)len, ip) != L2TP_DROP_NONE)
		abort();
	/* Nr: outside the digest values, so every digest must notice */
	out[(ip ? L2TP_IP_SESSION0_LEN : 0) + L2TP_CTRL_HDR_LEN - 1] ^= 1;
	if (l2tp_msg_decode(&m2, out, (size_t)len, ip, NULL) != L2TP_DROP_NONE ||
	    l2tp_auth_verify(&lns, &m2, out, (size_t)len, ip) != L2TP_DROP_DIGEST_MISMATCH)
		abort();	/* a flipped bit went unnoticed */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct l2tp_secret secret = {
		(const uint8_t *)FUZZ_SECRET, sizeof(FUZZ_SECRET) - 1
	};
	static struct l2tp_msg m;
	uint8_t *pkt;
	bool ip;

	if (size < 1)
		return 0;
	if (!auth_ready)
		auth_setup();
	ip = data[0] & 1;
	/* an exact-size copy: one octet past it is an ASan report */
	pkt = malloc(size - 1 ? size - 1 : 1);
	if (pkt == NULL)
		return 0;
	memcpy(pkt, data + 1, size - 1);
	l2tp_msg_decode_header(&m, pkt, size - 1, ip);
	if (l2tp_msg_decode(&m, pkt, size - 1, ip, (data[0] & 2) ? &secret : NULL) ==
	    L2TP_DROP_NONE) {
		/* whatever digests it carries, checking them must be safe */
		l2tp_auth_verify(&lns, &m, pkt, size - 1, ip);
		roundtrip(&m, ip);
		sign_verify(&m, ip);
	}
	free(pkt);
	return 0;
}
