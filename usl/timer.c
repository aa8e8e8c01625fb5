/*
 * usl/timer.c - timers in an rbtree ordered by (expiry, sequence).
 *
 * The sequence number makes every key unique and gives FIFO order among
 * equal expiries, which the protocol relies on (e.g. an ACK timer armed
 * before a retransmit timer for the same instant fires first).
 */
#include "timer.h"

static int timer_cmp(const struct usl_rb_node *a, const struct usl_rb_node *b)
{
	const struct usl_timer *ta = usl_rb_entry(a, struct usl_timer, node);
	const struct usl_timer *tb = usl_rb_entry(b, struct usl_timer, node);
	int c = usl_time_cmp(ta->expiry, tb->expiry);

	if (c)
		return c;
	return (ta->seq > tb->seq) - (ta->seq < tb->seq);
}

static void timerset_changed(struct usl_timerset *ts)
{
	if (ts->on_change)
		ts->on_change(ts, ts->on_change_arg);
}

static bool timer_is_first(const struct usl_timerset *ts, const struct usl_timer *t)
{
	return usl_rb_first(&ts->tree) == &t->node;
}

/* Unlinks an armed timer; true when it was the earliest. */
static bool timer_unlink(struct usl_timer *t)
{
	struct usl_timerset *ts = t->set;
	bool was_first = timer_is_first(ts, t);

	usl_rb_erase(&ts->tree, &t->node);
	ts->count--;
	t->set = NULL;
	return was_first;
}

void usl_timerset_init(struct usl_timerset *ts, const struct usl_clock *clock)
{
	usl_rb_init(&ts->tree);
	ts->seq = 0;
	ts->count = 0;
	ts->clock = clock;
	ts->on_change = NULL;
	ts->on_change_arg = NULL;
	ts->late = (struct usl_stall){ { 0 }, 0, 0 };
}

void usl_timer_init(struct usl_timer *t, usl_timer_fn fn)
{
	usl_rb_node_clear(&t->node);
	t->expiry = USL_TIME_NEVER;
	t->seq = 0;
	t->fn = fn;
	t->set = NULL;
}

void usl_timer_arm_at(struct usl_timerset *ts, struct usl_timer *t, usl_time expiry)
{
	bool changed = false;

	if (t->set && t->set != ts)
		usl_timer_cancel(t);	/* moving sets: the old one must hear of it */
	if (t->set)
		changed = timer_unlink(t);
	t->expiry = expiry;
	t->seq = ts->seq++;
	t->set = ts;
	usl_rb_insert(&ts->tree, &t->node, timer_cmp);
	ts->count++;
	if (changed || timer_is_first(ts, t))
		timerset_changed(ts);
}

void usl_timer_arm(struct usl_timerset *ts, struct usl_timer *t, usl_time delay)
{
	usl_timer_arm_at(ts, t, usl_time_add(usl_timerset_now(ts), delay));
}

void usl_timer_cancel(struct usl_timer *t)
{
	struct usl_timerset *ts = t->set;

	if (ts == NULL)
		return;
	if (timer_unlink(t))
		timerset_changed(ts);
}

usl_time usl_timerset_next(const struct usl_timerset *ts)
{
	const struct usl_rb_node *n = usl_rb_first(&ts->tree);

	if (n == NULL)
		return USL_TIME_NEVER;
	return usl_rb_entry(n, struct usl_timer, node)->expiry;
}

void usl_stall_count(struct usl_stall *s, usl_time d)
{
	if (usl_time_cmp(d, s->max) > 0)
		s->max = d;
	if (usl_time_cmp(d, usl_time_ms(100)) >= 0)
		s->over_100ms++;
	if (usl_time_cmp(d, usl_time_s(1)) >= 0)
		s->over_1s++;
}

size_t usl_timerset_run(struct usl_timerset *ts)
{
	/* One clock read: a slow callback must not make later timers due. */
	usl_time now = usl_timerset_now(ts);
	struct usl_rb_node *n;
	struct usl_timer *t;
	size_t fired = 0;

	while ((n = usl_rb_first(&ts->tree)) != NULL) {
		t = usl_rb_entry(n, struct usl_timer, node);
		if (usl_time_cmp(t->expiry, now) > 0)
			break;
		if (fired == 0)
			usl_stall_count(&ts->late, usl_time_sub(now, t->expiry));
		timer_unlink(t);
		fired++;
		t->fn(t);
	}
	/* Always: whoever drives us has consumed its wake-up and must re-arm. */
	timerset_changed(ts);
	return fired;
}
