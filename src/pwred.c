/*
 * src/pwred.c - pseudowire redundancy on the LAC: a static session that
 * names backup tunnels (tunnels.sessions.backup) comes up through the first
 * of them that is established when its own tunnel is down or refuses it,
 * and moves back to its own tunnel once that has been up for revert_delay
 * (unless revert = false).
 *
 * Like the control socket, this module only listens to the event fan-out:
 * tunnel.c and session.c know nothing of it.  It acts from a timer, never
 * from inside the event (an event comes from inside the protocol engine).
 * A session exists on one tunnel at a time (names are unique): a move back
 * clears it on the backup (CDN result 3) and then opens it on its own
 * tunnel.  The revert timer starts each time the primary comes up and stops
 * when it goes down, so a flapping primary moves the session at most once
 * per revert_delay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"
#include "l2tpv3d.h"
#include "usl/escape.h"
#include "usl/log.h"

struct pw {
	struct usl_list link;		/* pws */
	struct pwred_state st;		/* what show and the metrics see */
	struct usl_timer place_timer;	/* put it somewhere, outside the event */
	struct usl_timer revert_timer;	/* back to the primary when it fires */
	char lost_on[CFG_NAME_MAX];	/* the tunnel it was just cleared on */
	char lost_msg[96];		/* and what the CDN said */
	char avoid[CFG_NAME_MAX];	/* the tunnel that just refused it */
	bool reverting;			/* its clearing on the backup is ours */
};

static struct usl_list pws = USL_LIST_INIT(pws);

/* The static session named sess and its own tunnel, in the running configuration. */
static const struct static_session *home_of(const char *sess, const struct static_tunnel **home)
{
	const struct l2tpd_config *c = l2tpd.conf;

	for (unsigned i = 0; sess != NULL && i < c->n_tunnels; i++)
		for (unsigned j = 0; j < c->tunnels[i].n_sessions; j++)
			if (strcmp(c->tunnels[i].sessions[j].name, sess) == 0) {
				*home = &c->tunnels[i];
				return &c->tunnels[i].sessions[j];
			}
	return NULL;
}

static struct pw *pw_find(const char *sess)
{
	struct usl_list *pos;

	usl_list_foreach(pos, &pws) {
		struct pw *p = usl_container_of(pos, struct pw, link);

		if (sess != NULL && strcmp(p->st.session, sess) == 0)
			return p;
	}
	return NULL;
}

static void pw_place_due(struct usl_timer *tm);
static void pw_revert_due(struct usl_timer *tm);

/* The record of a static session with backups (made at its first event); NULL otherwise. */
static struct pw *pw_get(const char *sess)
{
	const struct static_tunnel *home;
	const struct static_session *ss = home_of(sess, &home);
	struct pw *p = pw_find(sess);

	if (ss == NULL || ss->n_backup == 0)
		return NULL;
	if (p == NULL && (p = calloc(1, sizeof(*p))) != NULL) {
		snprintf(p->st.session, sizeof(p->st.session), "%s", sess);
		usl_timer_init(&p->place_timer, pw_place_due);
		usl_timer_init(&p->revert_timer, pw_revert_due);
		usl_list_add_tail(&pws, &p->link);
	}
	if (p != NULL)
		snprintf(p->st.primary, sizeof(p->st.primary), "%s", home->name);
	return p;
}

static bool usable(const struct tunnel *t)
{
	return t != NULL && t->up && !t->closing && l2tp_cc_state(t->cc) == L2TP_CC_ESTABLISHED;
}

static bool lists(const struct static_session *ss, const char *tunnel)
{
	for (unsigned i = 0; i < ss->n_backup; i++)
		if (strcmp(ss->backup[i], tunnel) == 0)
			return true;
	return false;
}

/* Opens the session on the first usable of its own tunnel and its backups. */
static void pw_place(struct pw *p)
{
	const struct static_tunnel *home;
	const struct static_session *ss = home_of(p->st.session, &home);
	const char *cand[1 + CFG_MAX_BACKUPS];
	unsigned n = 0;

	if (ss == NULL || ss->n_backup == 0 || session_find_name(p->st.session) != NULL ||
	    l2tpd.shutting_down)
		return;
	cand[n++] = home->name;
	for (unsigned i = 0; i < ss->n_backup; i++)
		cand[n++] = ss->backup[i];
	for (unsigned i = 0; i < n; i++) {
		struct tunnel *t = tunnel_find_name(cand[i]);

		if (!usable(t) || strcmp(cand[i], p->avoid) == 0)
			continue;
		if (i > 0)
			log_info("session %s: through backup tunnel %s (primary %s: %s)",
				 p->st.session, cand[i], home->name,
				 p->st.why[0] ? p->st.why : "down");
		else if (p->st.active_backup)
			log_info("session %s: back on its primary tunnel %s", p->st.session,
				 home->name);
		if (static_session_open(t, p->st.session))
			return;
	}
	/* nowhere to go now: the next tunnel that comes up calls again */
}

/*
 * Why it was cleared, decided now that the event is over: a tunnel still
 * up refused it (or its peer cleared it), one that is not went down.
 */
static void pw_judge_loss(struct pw *p)
{
	if (p->lost_on[0] == '\0')
		return;
	if (usable(tunnel_find_name(p->lost_on))) {
		snprintf(p->avoid, sizeof(p->avoid), "%s", p->lost_on);
		snprintf(p->st.why, sizeof(p->st.why), "refused on %s%s%.80s", p->lost_on,
			 p->lost_msg[0] ? ": " : "", p->lost_msg);
	} else {
		snprintf(p->st.why, sizeof(p->st.why), "tunnel %s down", p->lost_on);
	}
	p->lost_on[0] = '\0';
}

static void pw_place_due(struct usl_timer *tm)
{
	struct pw *p = usl_container_of(tm, struct pw, place_timer);

	pw_judge_loss(p);
	pw_place(p);
	p->avoid[0] = '\0';
}

static void pw_place_soon(struct pw *p)
{
	if (!usl_timer_armed(&p->place_timer))
		usl_timer_arm(l2tpd.timers, &p->place_timer, usl_time_ms(0));
}

/* The primary has been up for revert_delay: the session moves back to it. */
static void pw_revert_due(struct usl_timer *tm)
{
	struct pw *p = usl_container_of(tm, struct pw, revert_timer);
	struct session *s = session_find_name(p->st.session);

	if (s == NULL || !usable(tunnel_find_name(p->st.primary)) ||
	    strcmp(name_str(s->tunnel->name), p->st.primary) == 0)
		return;
	log_info("session %s: primary tunnel %s up for its revert delay: moving back from %s",
		 p->st.session, p->st.primary, name_str(s->tunnel->name));
	p->reverting = true;
	snprintf(p->st.why, sizeof(p->st.why), "moving back to the primary");
	session_delete(s, L2TP_CDN_ADMIN, "moving back to the primary tunnel");
}

static void pw_session_up(struct pw *p, const struct session *s)
{
	bool backup = strcmp(name_str(s->tunnel->name), p->st.primary) != 0;
	const struct static_tunnel *home;
	const struct static_session *ss = home_of(p->st.session, &home);

	/* a switch: up on another tunnel than last time, or first up on a backup */
	if (strcmp(p->st.last_tunnel, name_str(s->tunnel->name)) != 0 &&
	    (p->st.last_tunnel[0] != '\0' || backup))
		p->st.switches++;
	snprintf(p->st.tunnel, sizeof(p->st.tunnel), "%s", name_str(s->tunnel->name));
	snprintf(p->st.last_tunnel, sizeof(p->st.last_tunnel), "%s", p->st.tunnel);
	p->st.active_backup = backup;
	p->st.since = (int64_t)time(NULL);
	if (!backup)
		p->st.why[0] = '\0';
	/* up on a backup while the primary is up already (it refused, or came up first) */
	if (backup && ss != NULL && ss->revert && usable(tunnel_find_name(p->st.primary)) &&
	    !usl_timer_armed(&p->revert_timer))
		usl_timer_arm(l2tpd.timers, &p->revert_timer, usl_time_ms(ss->revert_delay_ms));
}

static void pw_session_gone(struct pw *p, const struct l2tpd_event *ev)
{
	p->st.tunnel[0] = '\0';
	if (ev->s->deleted && !p->reverting)
		return;		/* the operator's or a reload's: not ours to bring back */
	if (!p->reverting) {
		snprintf(p->lost_on, sizeof(p->lost_on), "%s", name_str(ev->t->name));
		p->lost_msg[0] = '\0';
		if (ev->why != NULL && ev->why->message.len > 0)
			usl_str_escape(p->lost_msg, sizeof(p->lost_msg), ev->why->message.p,
				       ev->why->message.len);
	}
	p->reverting = false;
	pw_place_soon(p);
}

/* A tunnel came up: a primary starts its sessions' revert delay, any may take a waiting one. */
static void pw_tunnel_up(const struct tunnel *t)
{
	struct usl_list *pos;
	const char *name = name_str(t->name);

	usl_list_foreach(pos, &pws) {
		struct pw *p = usl_container_of(pos, struct pw, link);
		const struct static_tunnel *home;
		const struct static_session *ss = home_of(p->st.session, &home);

		if (ss == NULL)
			continue;
		if (strcmp(home->name, name) == 0 && p->st.active_backup && ss->revert)
			usl_timer_arm(l2tpd.timers, &p->revert_timer,
				      usl_time_ms(ss->revert_delay_ms));
		else if ((strcmp(home->name, name) == 0 || lists(ss, name)) &&
			 session_find_name(p->st.session) == NULL)
			pw_place_soon(p);
	}
}

static void pw_tunnel_down(const struct tunnel *t)
{
	struct usl_list *pos;

	usl_list_foreach(pos, &pws) {
		struct pw *p = usl_container_of(pos, struct pw, link);

		if (strcmp(p->st.primary, name_str(t->name)) == 0)
			usl_timer_cancel(&p->revert_timer);
	}
}

/* Every static session with backups gets its record, so a tunnel's events find it. */
static void pw_sync_config(void)
{
	const struct l2tpd_config *c = l2tpd.conf;
	struct usl_list *pos, *tmp;

	for (unsigned i = 0; i < c->n_tunnels; i++)
		for (unsigned j = 0; j < c->tunnels[i].n_sessions; j++)
			pw_get(c->tunnels[i].sessions[j].name);
	usl_list_foreach_safe(pos, tmp, &pws) {
		struct pw *p = usl_container_of(pos, struct pw, link);
		const struct static_tunnel *home;
		const struct static_session *ss = home_of(p->st.session, &home);

		if (ss != NULL && ss->n_backup > 0)
			continue;
		usl_timer_cancel(&p->place_timer);
		usl_timer_cancel(&p->revert_timer);
		usl_list_del(&p->link);
		free(p);
	}
}

static void pwred_on_event(const struct l2tpd_event *ev, void *arg)
{
	struct pw *p;

	(void)arg;
	switch (ev->kind) {
	case EV_SESSION_UP:
		if (ev->s->origin == ORIGIN_CONFIG && (p = pw_get(ev->s->name)) != NULL)
			pw_session_up(p, ev->s);
		break;
	case EV_SESSION_DELETED:
		if (ev->s->origin == ORIGIN_CONFIG && (p = pw_find(ev->s->name)) != NULL)
			pw_session_gone(p, ev);
		break;
	case EV_TUNNEL_UP:
		if (ev->t->origin == ORIGIN_CONFIG)
			pw_tunnel_up(ev->t);
		break;
	case EV_TUNNEL_DOWN:
	case EV_TUNNEL_DELETED:
		if (ev->t->origin == ORIGIN_CONFIG)
			pw_tunnel_down(ev->t);
		break;
	default:
		break;
	}
}

/* Sessions a restart handed over are where they were: no event said so. */
static void pw_adopt_running(void)
{
	struct usl_list *pos;

	usl_list_foreach(pos, &pws) {
		struct pw *p = usl_container_of(pos, struct pw, link);
		const struct session *s = session_find_name(p->st.session);

		if (s == NULL || !s->up)
			continue;
		snprintf(p->st.last_tunnel, sizeof(p->st.last_tunnel), "%s",
			 name_str(s->tunnel->name));
		pw_session_up(p, s);
	}
}

int pwred_init(void)
{
	pw_sync_config();
	pw_adopt_running();
	return event_subscribe(pwred_on_event, NULL);
}

void pwred_config_changed(void)
{
	pw_sync_config();
}

bool pwred_visiting(const char *sess, const char *tunnel, const struct l2tpd_config *c)
{
	for (unsigned i = 0; sess != NULL && tunnel != NULL && i < c->n_tunnels; i++)
		for (unsigned j = 0; j < c->tunnels[i].n_sessions; j++)
			if (strcmp(c->tunnels[i].sessions[j].name, sess) == 0)
				return lists(&c->tunnels[i].sessions[j], tunnel);
	return false;
}

const struct pwred_state *pwred_state(const char *sess)
{
	struct pw *p = pw_find(sess);

	return p ? &p->st : NULL;
}

const struct pwred_state *pwred_next(const struct pwred_state *prev)
{
	const struct usl_list *next;

	next = prev == NULL ? pws.next : usl_container_of(prev, const struct pw, st)->link.next;
	return next == &pws ? NULL : &usl_container_of(next, const struct pw, link)->st;
}

json_object *pwred_json(const char *sess)
{
	const struct pwred_state *st = pwred_state(sess);
	json_object *o;

	if (st == NULL)
		return NULL;
	o = json_object_new_object();
	json_add_str(o, "path", st->tunnel[0] == '\0' ? "none" : st->active_backup ? "backup"
											: "primary");
	json_add_str(o, "primary", st->primary);
	json_add_str(o, "tunnel", st->tunnel);
	if (st->why[0])
		json_add_str(o, "why", st->why);
	json_add_int(o, "switches", st->switches);
	if (st->since)
		json_add_int(o, "since", st->since);
	return o;
}
