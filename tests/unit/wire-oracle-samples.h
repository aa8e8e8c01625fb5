/*
 * tests/unit/wire-oracle-samples.h - one representative message of every
 * type, shared by the codec tests, the tshark oracle and the fuzz seeds.
 */
#ifndef WIRE_ORACLE_SAMPLES_H
#define WIRE_ORACLE_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/msg.h"

/* Values the oracle script greps tshark's output for. */
#define SAMPLE_HOST_NAME	"lac1.example.net"
#define SAMPLE_VENDOR_NAME	"l2tpv3d"
#define SAMPLE_ROUTER_ID	0x0a000001u
#define SAMPLE_CCID_LAC		0x1badcafeu	/* assigned by the SCCRQ sender */
#define SAMPLE_CCID_LNS		0x2badf00du	/* assigned by the SCCRP sender */
#define SAMPLE_SID_LAC		0x00c0ffeeu
#define SAMPLE_SID_LNS		0x00beef01u
#define SAMPLE_END_ID		"ge-0/0/1.100"
#define SAMPLE_COOKIE		{ 0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67 }

struct sample {
	const char *name;
	uint16_t type;
	uint16_t ns, nr;
	bool from_lac;		/* direction, for a plausible conversation */
	void (*build)(struct l2tp_msg *m);
};

extern const struct sample samples[];
extern const unsigned n_samples;

/* Fills m with sample i (Ns/Nr and CCID included). */
void sample_build(unsigned i, struct l2tp_msg *m);

/*
 * Compares what a decode must reproduce of an encoded message: header,
 * type, present bits and every present value.  Returns NULL when equal,
 * else the name of the first field that differs.
 */
const char *sample_msg_diff(const struct l2tp_msg *a, const struct l2tp_msg *b);

#endif
