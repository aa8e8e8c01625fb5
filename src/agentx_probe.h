/*
 * src/agentx_probe.h - is the AgentX master answering?  Asked without
 * blocking the loop.
 *
 * net-snmp opens its AgentX session and registers with synchronous
 * exchanges: a master that accepts connections but does not answer (stopped,
 * hung, or a fake) would stall the daemon for the whole wait.  So before
 * net-snmp is let near the master, a rehearsal on a socket of our own, on
 * the loop: Open, Register of the subtree (at the lowest priority, so it
 * never collides with the real one), Close, each answered within the
 * deadline.  Only a master that answered all three just now is handed to
 * net-snmp.
 */
#ifndef L2TPD_AGENTX_PROBE_H
#define L2TPD_AGENTX_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ok, or why not ("no answer to Open within 1000 ms", "connect: ..."). */
typedef void (*axprobe_done_fn)(bool ok, const char *why, void *arg);

/*
 * Whether socket (net-snmp's agentx syntax) is one we can probe: a path,
 * "unix:PATH", or "tcp:ADDR:PORT" with a numeric address or localhost.
 */
bool axprobe_supported(const char *socket);

/*
 * Starts the rehearsal; done is called once, from the loop, never from
 * inside this call.  0, or -1 (out of memory / descriptors: done is not called).
 */
int axprobe_start(const char *socket, const uint32_t *subtree, size_t len,
		  unsigned timeout_ms, axprobe_done_fn done, void *arg);

/* Drops a rehearsal in progress (done is not called). */
void axprobe_cancel(void);

#endif
