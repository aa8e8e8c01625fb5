/*
 * tests/fuzz/fuzz_msg.c - libFuzzer target for the control message codec.
 *
 * The first input octet selects the variant (bit 0: over IP with the zero
 * session ID, bit 1: decode with a hiding secret), the rest is the datagram.
 * Whatever decodes must encode, and decode again to the same message; the
 * digest check must survive any decoded message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/auth.h"
#include "proto/msg.h"
#include "wire-oracle-samples.h"

#define FUZZ_SECRET	"oracle-secret"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct l2tp_auth auth;
static bool auth_ready;

static void auth_setup(void)
{
	static const struct l2tp_bytes peer = { (const uint8_t *)"peer-nonce-0123456", 18 };

	l2tp_auth_init(&auth);
	l2tp_auth_add_key(&auth, L2TP_DIGEST_HMAC_MD5, (const uint8_t *)FUZZ_SECRET,
			  strlen(FUZZ_SECRET));
	l2tp_auth_add_key(&auth, L2TP_DIGEST_HMAC_SHA1, NULL, 0);
	l2tp_auth_new_nonce(&auth);
	l2tp_auth_set_peer_nonce(&auth, &peer);
	auth_ready = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct l2tp_secret secret = {
		(const uint8_t *)FUZZ_SECRET, sizeof(FUZZ_SECRET) - 1
	};
	static uint8_t out[L2TP_MAX_MSG + L2TP_IP_SESSION0_LEN];
	static struct l2tp_msg m, m2;
	const char *why;
	uint8_t *pkt;
	bool ip;
	int len;

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
		l2tp_auth_verify(&auth, &m, pkt, size - 1, ip);
		/* the v2 speeds are read as 74/75 and sent as such */
		m.present &= ~(L2TP_AVP_BIT(L2TP_AVP_TX_CONNECT_SPEED) |
			       L2TP_AVP_BIT(L2TP_AVP_RX_CONNECT_SPEED));
		len = l2tp_msg_encode(&m, out, sizeof(out), ip, 0, NULL);
		if (len < 0)
			abort();	/* decoded but cannot be sent back */
		if (l2tp_msg_decode(&m2, out, (size_t)len, ip, NULL) != L2TP_DROP_NONE)
			abort();	/* our own encoding refused */
		why = sample_msg_diff(&m, &m2);
		if (why)
			abort();	/* the round trip changed a field */
		if (m.n_digests && l2tp_auth_sign(&auth, out, (size_t)len, ip) < 0)
			abort();	/* digest AVPs we wrote cannot be signed */
	}
	free(pkt);
	return 0;
}
