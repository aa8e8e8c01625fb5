/*
 * src/inspect/seq.c - reliable delivery as seen on the wire (RFC 3931 4.2):
 * Ns continuity, Nr sanity, retransmissions, their backoff and whether the
 * peer acknowledged them.
 *
 * Each side remembers its last RING sequenced messages by Ns.  A copy of
 * one of them is a retransmission; its record is held back from printing
 * (insp_rec_hold()) until the peer sends an Nr past it, or the capture ends
 * and it earns an unacked-retransmission violation.
 */
#include <stdio.h>
#include <string.h>

#include "conn.h"

/* A message from side s with this Nr acknowledges the other side's copies below it. */
static void release_acked(struct side *r, uint16_t nr)
{
	struct sent *e;
	unsigned i;

	for (i = 0; i < RING && r->n_waiting; i++) {
		e = &r->ring[i];
		if (e->waiting == NULL || !seq_before(e->ns, nr))
			continue;
		insp_rec_hold(e->waiting, false);
		e->waiting = NULL;
		r->n_waiting--;
	}
}

/*
 * R joined late: an Nr beyond what we saw of it counts messages R sent
 * before the capture.  From then on, every Ns of R is accounted for.
 */
static void sync_late(struct conn *c, struct side *R, uint16_t nr)
{
	if (R->synced || c->loose || !R->seq_known || seq_before(nr, R->next_ns))
		return;
	R->next_ns = nr;
	R->synced = true;
}

void insp_seq_nr(struct conn *c, int s, struct insp_rec *r, uint16_t nr)
{
	struct side *S = &c->side[s], *R = &c->side[!s];

	sync_late(c, R, nr);
	/* all of R's messages must land here for this to be fair */
	if (!c->loose && R->synced && seq_after(nr, R->next_ns))
		insp_rec_violation(r, V_NR_INVALID, "Nr %u acknowledges messages never sent "
				   "(the peer's next Ns is %u)", nr, R->next_ns);
	else if (S->nr_seen && seq_before(nr, S->max_nr))
		insp_rec_violation(r, V_NR_BACKWARDS, "Nr %u below the Nr %u this side already "
				   "sent (4.2: Nr MUST be the next expected Ns)", nr, S->max_nr);
	else if (!S->nr_seen || seq_after(nr, S->max_nr)) {
		S->max_nr = nr;
		S->nr_seen = true;
	}
	release_acked(R, nr);
}

static void new_sent(struct conn *c, int s, const struct insp_pkt *pk, uint16_t ns,
		     uint16_t type)
{
	struct side *S = &c->side[s];
	struct sent *e = &S->ring[ns % RING];

	if (e->waiting) {
		insp_rec_hold(e->waiting, false);
		S->n_waiting--;
	}
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->ns = ns;
	e->type = type;
	e->frame = pk->frame;
	e->copies = 1;
	e->t_last = pk->t_ns;
	/*
	 * Only a connection's first message surely timed out from its own
	 * transmission; any later one may have waited behind an older
	 * message's timer (an ACK seen here may never have reached the sender).
	 */
	e->head = c->from_start && ns == 0;
}

/*
 * Each retransmission MUST back off exponentially (4.2), up to a cap that
 * SHOULD be at least 8 s.  The interval before the first retransmission
 * counts only for a connection's first message (see new_sent()): later
 * ones wait behind an older message's timer, and implementations restart
 * the backoff for them once that one is acknowledged.  A timer fires late,
 * never early: one late copy lengthens its interval, and the next one,
 * doubled on time, can look no longer.  So an interval is held against the
 * one two copies back (at least 1.5 times as long, after two doublings):
 * flat retransmission is still found, one copy later.
 */
static void check_backoff(struct sent *e, struct insp_rec *r, int64_t gap)
{
	if (e->backoff_flagged || e->copies < 4 || (e->copies == 4 && !e->head))
		return;
	if (gap + SLACK_NS >= e->gap_prev * 3 / 2 || gap >= CAP_NS)
		return;
	e->backoff_flagged = true;
	insp_rec_violation(r, V_NO_BACKOFF, "retransmitted %.3f s after the previous copy, "
			   "and %.3f s after the one two before it came (4.2: exponential "
			   "backoff, any cap >= 8 s)", (double)gap / SEC, (double)e->gap_prev / SEC);
}

static void retransmission(struct side *S, struct sent *e, struct insp_rec *r, int64_t t)
{
	int64_t gap = t - e->t_last;

	e->copies++;
	S->n_rtx++;
	insp_rec_retransmission(r, e->copies, gap);
	check_backoff(e, r, gap);
	e->gap_prev = e->gap_last;
	e->gap_last = gap;
	e->t_last = t;
	/* 4.2: duplicates MUST be acknowledged; a superseded copy may have been lost */
	if (e->waiting)
		insp_rec_hold(e->waiting, false);
	else
		S->n_waiting++;
	e->waiting = r;
	insp_rec_hold(r, true);
}

/* Returns true for a new message, false for a copy of one already seen. */
bool insp_seq_ns(struct conn *c, int s, struct insp_rec *r, const struct insp_pkt *pk,
		 uint16_t ns, uint16_t type, bool is_ack)
{
	struct side *S = &c->side[s];
	struct sent *e;

	if (!S->seq_known) {
		S->seq_known = true;
		S->next_ns = ns;
	}
	if (is_ack) {
		/* an ACK takes no Ns slot: it carries the next Ns (4.2) */
		if (seq_after(ns, S->next_ns)) {
			if (S->synced)
				insp_rec_violation(r, V_NS_GAP, "Ns %u, but this side's next Ns "
						   "is %u: messages missing", ns, S->next_ns);
			S->next_ns = ns;
		}
		return true;
	}
	if (ns == S->next_ns || seq_after(ns, S->next_ns)) {
		/* joined late, the first copy seen may be a retransmission: no gap yet */
		if (ns != S->next_ns && S->synced)
			insp_rec_violation(r, V_NS_GAP, "Ns %u, expected %u (%u messages missing)",
					   ns, S->next_ns, (uint16_t)(ns - S->next_ns));
		new_sent(c, s, pk, ns, type);
		S->next_ns = ns + 1;
		return true;
	}
	e = &S->ring[ns % RING];
	if (!e->used || e->ns != ns) {
		insp_rec_note(r, "copy of Ns %u, sent too long ago to compare", ns);
		return false;
	}
	if (e->type != type) {
		insp_rec_violation(r, V_NS_REUSED, "Ns %u carried %s in frame %u, now %s", ns,
				   l2tp_msg_type_name(e->type), e->frame, l2tp_msg_type_name(type));
		return true;
	}
	retransmission(S, e, r, pk->t_ns);
	return false;
}

/*
 * Side s's StopCCN, carrying Nr, ends the connection: the other side's
 * messages from Nr on were not taken by s, and nobody retransmits them any
 * more.  Whether they were lost on the way (a capture taken before a lossy
 * hop) or reached s and were ignored (a capture taken at s), the capture
 * cannot tell: a note that says both, not an unacked-retransmission.
 */
static void note_not_taken(struct side *R, struct sent *e, uint16_t nr)
{
	insp_rec_note(e->waiting, "not taken by the peer before its StopCCN (Nr %u): "
		      "lost on the way or ignored by it", nr);
	insp_rec_hold(e->waiting, false);
	e->waiting = NULL;
	R->n_waiting--;
}

void insp_seq_closed_by(struct conn *c, int s, uint16_t nr)
{
	struct side *R = &c->side[!s];
	struct sent *e;
	unsigned i;

	c->side[s].stopped = true;
	c->side[s].stop_nr = nr;
	for (i = 0; i < RING && R->n_waiting; i++) {
		e = &R->ring[i];
		if (e->waiting != NULL && !seq_before(e->ns, nr))
			note_not_taken(R, e, nr);
	}
}

/*
 * A retransmission still unacknowledged at the end.  The peer's
 * acknowledgements reach this connection only when they carry a CCID we
 * know is S's (announced, not guessed); otherwise there is nothing to say.
 */
void insp_seq_finish(struct side *S, const struct side *R, int64_t end)
{
	bool fair = S->ccid_known && !S->conn->loose;
	char peer[INSP_ADDR_STRLEN];
	struct sent *e;
	unsigned i;

	insp_addr_str(&R->addr, false, peer, sizeof(peer));
	for (i = 0; i < RING && S->n_waiting; i++) {
		e = &S->ring[i];
		if (e->waiting == NULL)
			continue;
		/* a copy sent after R's StopCCN, which a closing R no longer takes */
		if (R->stopped && !seq_before(e->ns, R->stop_nr)) {
			note_not_taken(S, e, R->stop_nr);
			continue;
		}
		if (!fair)
			insp_rec_note(e->waiting, "acknowledgement not checked: the peer's "
				      "direction was not identified");
		else if (end - e->t_last >= GRACE_NS)
			insp_rec_violation(e->waiting, V_UNACKED_RTX, "%s Ns %u sent %u times, "
					   "%s never acknowledged the last copy (4.2: duplicates "
					   "MUST be acknowledged)", l2tp_msg_type_name(e->type), e->ns,
					   e->copies, peer);
		else
			insp_rec_note(e->waiting, "not acknowledged before the capture ended");
		insp_rec_hold(e->waiting, false);
		e->waiting = NULL;
		S->n_waiting--;
	}
}
