/*
 * src/cli/output_json.c - -j output, for scripts and jq: a single command
 * prints the reply's data (pretty), a batch one object per reply line,
 * monitor one event per line.  Diagnostics stay on stderr either way.
 */
#include <stdio.h>

#include "cli.h"
#include "ctl_proto.h"

static void print_json(json_object *o, int flags)
{
	puts(json_object_to_json_string_ext(o, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* A failure may still carry data (peer-refused: the result): print it too. */
static void json_result(const struct request *req, const struct reply *r)
{
	(void)req;
	if (r->status != CTL_OK)
		print_failure(r);
	if (r->data)
		print_json(r->data, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
	else if (r->status == CTL_OK)
		puts("{}");
}

static json_object *batch_line(unsigned long line, int status, const char *status_name,
			       const char *error)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "line", json_object_new_int64((int64_t)line));
	json_object_object_add(o, "status", json_object_new_int(status));
	json_object_object_add(o, "status_name", json_object_new_string(status_name));
	if (error)
		json_object_object_add(o, "error", json_object_new_string(error));
	return o;
}

static void json_batch_reply(unsigned long line, const struct request *req,
			     const struct reply *r)
{
	json_object *o = batch_line(line, r->status, r->status_name, r->error);

	(void)req;
	if (r->data)
		json_object_object_add(o, "data", json_object_get(r->data));
	print_json(o, JSON_C_TO_STRING_PLAIN);
	json_object_put(o);
}

/* Every input line gets an output line, so a script can count and match them. */
static void json_batch_error(unsigned long line, const char *msg)
{
	json_object *o = batch_line(line, CTL_E_INVALID, ctl_status_name(CTL_E_INVALID), msg);

	print_json(o, JSON_C_TO_STRING_PLAIN);
	json_object_put(o);
}

static void json_batch_summary(unsigned long commands, unsigned long failed)
{
	printf("{\"summary\":{\"commands\":%lu,\"succeeded\":%lu,\"failed\":%lu}}\n",
	       commands, commands - failed, failed);
}

static void json_event(json_object *ev)
{
	print_json(ev, JSON_C_TO_STRING_PLAIN);
}

/* Shaped like an event, so a consumer reading "event" sees it among them. */
static void json_reconnected(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "event", json_object_new_string("reconnected"));
	json_object_object_add(o, "time", json_object_new_double(wall_now()));
	print_json(o, JSON_C_TO_STRING_PLAIN);
	json_object_put(o);
}

const struct output output_json = {
	.result = json_result,
	.batch_reply = json_batch_reply,
	.batch_error = json_batch_error,
	.batch_summary = json_batch_summary,
	.event = json_event,
	.reconnected = json_reconnected,
};
