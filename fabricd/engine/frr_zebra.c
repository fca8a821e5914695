// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/frr_zebra.c - what zebra holds, for the EVPN entries it left behind:
 * a zebra killed (kill -9, the OOM killer) leaves its flood and MAC entries
 * in the kernel, and the one started again never learns of what was
 * withdrawn meanwhile (engine/switch.c asks, kinds/fdb.c removes).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/frr.h"
#include "engine/frr_priv.h"

/* The entry of `show evpn vni detail json` (an array, or an object keyed by VNI) for vni. */
static json_t *detail_vni(json_t *detail, uint32_t vni)
{
	char key[16];
	json_t *v;
	size_t i;

	if (!json_is_array(detail)) {
		snprintf(key, sizeof(key), "%u", vni);
		return json_object_get(detail, key);
	}
	json_array_foreach(detail, i, v)
	{
		if (json_integer_value(json_object_get(v, "vni")) == (json_int_t)vni)
			return v;
	}
	return NULL;
}

static int vteps_from(json_t *list, struct ip_addr **out, size_t *n)
{
	json_t *t;
	size_t i;

	if (!json_is_array(list) || !json_array_size(list))
		return 0;
	*out = calloc(json_array_size(list), sizeof(**out));
	if (!*out)
		return -ENOMEM;
	json_array_foreach(list, i, t)
	{
		const char *ip = frr_vtep_address(t);

		if (ip && ip_addr_parse(ip, &(*out)[*n]) == 0)
			(*n)++;
	}
	return 0;
}

/*
 * A zebra that did not answer within FRR_READ_TIMEOUT_MS (stopped, stuck) is
 * not asked again for ZEBRA_SILENT_MS. An answer is one read of every VNI,
 * kept: a plan asks for each EVPN vnet with a flood entry to no member, the
 * daemon on every pass, and a VTEP outside the fabric (a switch's) makes
 * that every vnet on every pass (one vtysh each made a pass of 100 such
 * vnets take seconds).
 */
#define ZEBRA_SILENT_MS 30000
static double zebra_silent_at = -1;
struct zebra_read {
	json_t *json; /* the answer */
	double at;    /* when it was read, or asked without an answer */
	bool failed;  /* asked at `at`, and vtysh gave no JSON */
};
static struct zebra_read zebra_vnis; /* `show evpn vni detail json` */
static struct zebra_read zebra_macs; /* `show evpn mac vni all json` */

/* The answers are kept for the process's life; freed at its exit, so no block stays. */
static void zebra_forget(void)
{
	json_decref(zebra_vnis.json);
	json_decref(zebra_macs.json);
	zebra_vnis.json = zebra_macs.json = NULL;
}

/* *z read with cmd at read_since_ms or later: 0, or -EIO (said) */
static int zebra_ask(const char *pathspace, const char *cmd, struct zebra_read *z,
		     double read_since_ms)
{
	static bool forget_at_exit;
	int ret;

	/*
	 * A failure counts as an answer does: a vtysh that fails at once (zebra's
	 * vty socket gone, say) was run again for every vnet with such an entry.
	 */
	if ((z->json || z->failed) && z->at >= read_since_ms)
		return z->json ? 0 : -EIO;
	if (!forget_at_exit)
		forget_at_exit = atexit(zebra_forget) == 0;
	if (zebra_silent_at >= 0 && clock_mono_ms() - zebra_silent_at < ZEBRA_SILENT_MS)
		return -EIO;
	json_decref(z->json);
	z->json = frr_show_json_within(pathspace, cmd, FRR_READ_TIMEOUT_MS, &ret);
	z->at = clock_mono_ms();
	if (!z->json && !z->failed && ret != -ETIMEDOUT)
		log_warn("frr: vtysh -c '%s' gave no JSON (%s %d): flood and MAC entries of EVPN "
			 "vnets to no member are kept until it does; see `systemctl status frr` "
			 "and FRR's log",
			 cmd, ret < 0 ? "error" : "exit status", ret < 0 ? -ret : ret);
	else if (z->json && z->failed)
		log_info("frr: vtysh -c '%s' answers again", cmd);
	z->failed = !z->json;
	zebra_silent_at = ret == -ETIMEDOUT ? clock_mono_ms() : -1;
	if (ret == -ETIMEDOUT)
		log_warn("frr: vtysh -c '%s' did not answer within %d s (is zebra stopped or "
			 "stuck?): flood and MAC entries of EVPN vnets to no member are kept, and "
			 "zebra is not asked again for %d s; see `systemctl status frr` and FRR's "
			 "log",
			 cmd, FRR_READ_TIMEOUT_MS / 1000, ZEBRA_SILENT_MS / 1000);
	return z->json ? 0 : -EIO;
}

/* zebra's answer to cmd into *z as zebra_ask: 1; 0 when zebra is dead (it holds nothing) */
static int zebra_answer(const char *pathspace, const char *cmd, struct zebra_read *z,
			double read_since_ms)
{
	int ret;

	if (!frr_daemon_alive(pathspace, "zebra"))
		return 0; /* what a dead zebra left is no one's */
	ret = zebra_ask(pathspace, cmd, z, read_since_ms);
	return ret < 0 ? ret : 1;
}

int frr_zebra_vteps(const char *pathspace, uint32_t vni, double read_since_ms, struct ip_addr **out,
		    size_t *n)
{
	int ret;

	*out = NULL;
	*n = 0;
	ret = zebra_answer(pathspace, "show evpn vni detail json", &zebra_vnis, read_since_ms);
	if (ret <= 0)
		return ret;
	return vteps_from(frr_vni_remote_vteps(detail_vni(zebra_vnis.json, vni)), out, n);
}

int frr_zebra_macs(const char *pathspace, uint32_t vni, double read_since_ms, uint8_t (**out)[6],
		   size_t *n)
{
	char key[16];
	const char *mac;
	json_t *macs, *v;
	int ret;

	*out = NULL;
	*n = 0;
	ret = zebra_answer(pathspace, "show evpn mac vni all json", &zebra_macs, read_since_ms);
	if (ret <= 0)
		return ret;
	/* {"VNI": {"numMacs": N, "macs": {"MAC": {"type": "remote", ...}}}}: every MAC it holds */
	snprintf(key, sizeof(key), "%u", vni);
	macs = json_object_get(json_object_get(zebra_macs.json, key), "macs");
	if (!json_is_object(macs) || !json_object_size(macs))
		return 0;
	*out = calloc(json_object_size(macs), sizeof(**out));
	if (!*out)
		return -ENOMEM;
	json_object_foreach(macs, mac, v)
	{
		unsigned int b[6];
		char end;

		if (sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
			   &b[5], &end) != 6)
			continue;
		for (int i = 0; i < 6; i++)
			(*out)[*n][i] = (uint8_t)b[i];
		(*n)++;
	}
	return 0;
}
