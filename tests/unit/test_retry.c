// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_retry.c - the daemon's retry of a valid definition that failed on its
 * node (daemon/retry.h) and the roaming marks of a changed definition
 * (daemon/roam.h): back-off 1 s doubling to 30 s, at once on a kernel
 * change, each distinct failure logged once; only moved endpoints marked.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "daemon/retry.h"
#include "daemon/roam.h"
#include "unit.h"

static struct cluster *empty_cluster(void)
{
	return calloc(1, sizeof(struct cluster));
}

/* What def_retry_failed() logs for a failure whose own lines were log. */
static char *failed(struct def_retry *r, const char *log, long long now)
{
	char *out;

	log_capture_begin();
	def_retry_failed(r, empty_cluster(), log, "cluster.json", now);
	out = log_capture_end();
	return out;
}

static void test_backoff_and_logging(void)
{
	static const long long want[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000};
	struct def_retry r = {0};
	struct cluster *c;
	char *out;

	CHECK_INT(def_retry_delay(&r, 0), -1, "nothing pending");
	CHECK(def_retry_take(&r, true, 0) == NULL, "nothing to take");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		long long now = 100000 * (long long)i;

		out = failed(&r, "error: bridge vnet300: a link named vnet300 exists\n", now);
		CHECK_INT(def_retry_delay(&r, now), want[i], "back-off after failure %zu", i + 1);
		if (i == 0)
			CHECK(out && strstr(out, "vnet300 exists") &&
				  strstr(out, "trying again in 1 s"),
			      "the first failure is logged: %s", out ? out : "(null)");
		else
			CHECK(!out || !strstr(out, "vnet300"), "the same failure again is not: %s",
			      out);
		free(out);
		CHECK(def_retry_take(&r, false, now + want[i] - 1) == NULL, "not due yet");
		c = def_retry_take(&r, false, now + want[i]);
		CHECK(c != NULL, "due");
		cluster_free(c);
	}
	CHECK_STR(r.first_error, "bridge vnet300: a link named vnet300 exists", "for STATUS");
	out = failed(&r, "error: another reason\n", 0);
	CHECK(out && strstr(out, "another reason"), "a new failure is logged");
	free(out);
	c = def_retry_take(&r, true, 0);
	CHECK(c != NULL, "a kernel change makes it due at once");
	cluster_free(c);
	log_capture_begin();
	def_retry_succeeded(&r, "cluster.json");
	out = log_capture_end();
	CHECK(out && strstr(out, "applied after 8 failed attempts"), "success says so: %s", out);
	free(out);
	CHECK_INT(r.failures, 0, "forgotten");
	CHECK_INT(def_retry_delay(&r, 0), -1, "nothing pending");
	out = failed(&r, "error: bridge vnet300: a link named vnet300 exists\n", 0);
	CHECK(out && strstr(out, "vnet300"), "after a success the old failure counts as new");
	free(out);
	def_retry_drop(&r);
}

static struct cluster *two_nodes(const char *ep2)
{
	struct cluster *c = empty_cluster();

	c->fabric.listen_port = 51820;
	c->n_nodes = 2;
	c->nodes = calloc(2, sizeof(*c->nodes));
	strcpy(c->nodes[0].name, "pve1");
	strcpy(c->nodes[1].name, "pve2");
	ip_addr_parse("192.0.2.11", &c->nodes[0].underlay);
	ip_addr_parse("192.0.2.12", &c->nodes[1].underlay);
	if (ep2) {
		c->nodes[1].flags |= NODE_HAS_ENDPOINT;
		strcpy(c->nodes[1].endpoint_host, ep2);
		c->nodes[1].endpoint_port = 40000;
	}
	return c;
}

static void test_roam_marks(void)
{
	struct cluster *a = two_nodes(NULL), *b = two_nodes("nat.example.org");
	struct reconcile r;

	memset(&r, 0, sizeof(r));
	CHECK_INT(roam_mark_moved(&r, NULL, a), 0, "no previous definition");
	CHECK(r.roaming && r.n_endpoint_moved == 2 && !r.endpoint_moved[1], "nothing moved");
	CHECK_INT(roam_mark_moved(&r, a, a), 0, "same");
	CHECK(!r.endpoint_moved[0] && !r.endpoint_moved[1], "unchanged: nothing moved");
	CHECK_INT(roam_mark_moved(&r, a, b), 0, "endpoint added");
	CHECK(!r.endpoint_moved[0] && r.endpoint_moved[1], "pve2 moved");
	b->nodes[1].flags &= ~NODE_HAS_ENDPOINT;
	b->nodes[0].flags |= NODE_HAS_LISTEN_PORT;
	b->nodes[0].listen_port = 51821;
	CHECK_INT(roam_mark_moved(&r, a, b), 0, "port changed");
	CHECK(r.endpoint_moved[0] && !r.endpoint_moved[1], "pve1 moved, pve2 back to the same");
	free(r.endpoint_moved);
	cluster_free(a);
	cluster_free(b);
}

int main(void)
{
	test_backoff_and_logging();
	test_roam_marks();
	return unit_summary("test_retry");
}
