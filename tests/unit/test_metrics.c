// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_metrics.c - the Prometheus text of daemon/metrics_text.c, the
 * --metrics address parser, and the probe frame encoding.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/probe_frame.h"
#include "unit.h"

static void test_render(void)
{
	struct metrics_peer peers[] = {
	    {.name = "pve2",
	     .present = true,
	     .latest_handshake = 1000,
	     .rx_bytes = 5,
	     .tx_bytes = 7,
	     .endpoint_changes = 1},
	    {.name = "pve3", .present = true},
	};
	struct metrics_probe probes[] = {
	    {.peer = "pve2",
	     .zone = "red",
	     .transport = "plain",
	     .reachable = true,
	     .black_hole = true,
	     .rtt_seconds = 0.0005,
	     .mtu = 1450,
	     .largest = 1350},
	    {.peer = "pve3", .zone = "red", .transport = "plain"},
	};
	struct metrics_zone zones[] = {{.name = "red",
					.transport = "plain",
					.mtu_policy = "stable",
					.mtu = 1390,
					.n_vnets = 2}};
	struct metrics_vnet vnets[] = {
	    {.name = "vnet100",
	     .device = "vx100",
	     .zone = "red",
	     .vni = 100,
	     .present = true,
	     .rx_packets = 11,
	     .tx_bytes = 12345678901ULL},
	    {.name = "vnet101", .device = "vx101", .zone = "red", .vni = 101},
	};
	struct metrics_repair repairs[] = {{.kind = "vxlan", .count = 3}};
	struct metrics_data d = {
	    .version = "v\"1\\",
	    .cluster = "lab",
	    .node = "pve1",
	    .fabric_present = true,
	    .fabric_mtu = 1440,
	    .n_peers = 2,
	    .peers = peers,
	    .n_probes = 2,
	    .probes = probes,
	    .n_zones = 1,
	    .zones = zones,
	    .n_vnets = 2,
	    .vnets = vnets,
	    .guard_present = true,
	    .guard_counter_present = {true, true, false, true},
	    .guard = {{.packets = 4, .bytes = 400}},
	    .passes = 5,
	    .pass_errors = 1,
	    .duration_buckets = {1, 2, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5},
	    .duration_sum = 1.5,
	    .n_repairs = 1,
	    .repairs = repairs,
	    .scrape_timestamp = 1010.4,
	    .heap_in_use_bytes = 7340032,
	};
	char *text = NULL;
	size_t len = 0;

	CHECK_INT(metrics_render(&d, &text, &len), 0, "render");
	CHECK_INT(len, strlen(text), "length without the NUL");
#define HAS(s)	 CHECK(strstr(text, s) != NULL, "missing: %s", s)
#define LACKS(s) CHECK(strstr(text, s) == NULL, "unexpected: %s", s)
	HAS("fabricd_build_info{version=\"v\\\"1\\\\\",cluster=\"lab\",node=\"pve1\"} 1\n");
	HAS("# TYPE fabricd_peer_receive_bytes_total counter\n");
	HAS("fabricd_peer_receive_bytes_total{peer=\"pve2\"} 5\n");
	HAS("fabricd_peer_latest_handshake_timestamp_seconds{peer=\"pve3\"} 0\n");
	HAS("fabricd_peer_latest_handshake_age_seconds{peer=\"pve2\"} 10\n");
	LACKS("fabricd_peer_latest_handshake_age_seconds{peer=\"pve3\"}");
	HAS("fabricd_peer_endpoint_changes_total{peer=\"pve2\"} 1\n");
	HAS("fabricd_probe_mtu_black_hole{peer=\"pve2\",zone=\"red\",transport=\"plain\"} 1\n");
	HAS("fabricd_probe_largest_passing_bytes{peer=\"pve2\",zone=\"red\",transport=\"plain\"} "
	    "1350\n");
	HAS("fabricd_probe_reachable{peer=\"pve3\",zone=\"red\",transport=\"plain\"} 0\n");
	HAS("fabricd_probe_rtt_seconds{peer=\"pve2\",zone=\"red\",transport=\"plain\"} 0.000500\n");
	LACKS("fabricd_probe_rtt_seconds{peer=\"pve3\"");
	HAS("fabricd_zone_info{zone=\"red\",transport=\"plain\",mtu_policy=\"stable\"} 1\n");
	HAS("fabricd_zone_vnets{zone=\"red\"} 2\n");
	HAS("fabricd_vnet_transmit_bytes_total{vnet=\"vnet100\",zone=\"red\",vni=\"100\","
	    "device=\"vx100\"} 12345678901\n");
	LACKS("vnet=\"vnet101\"");
	HAS("fabricd_guard_dropped_packets_total{counter=\"plain\"} 4\n");
	LACKS("counter=\"wireguard\"");
	HAS("fabricd_reconcile_duration_seconds_bucket{le=\"0.001\"} 1\n");
	HAS("fabricd_reconcile_duration_seconds_bucket{le=\"+Inf\"} 5\n");
	HAS("fabricd_reconcile_duration_seconds_count 5\n");
	HAS("fabricd_reconcile_errors_total 1\n");
	HAS("fabricd_drift_repairs_total{kind=\"vxlan\"} 3\n");
	HAS("# TYPE fabricd_heap_in_use_bytes gauge\n");
	HAS("fabricd_heap_in_use_bytes 7340032\n");
	CHECK(text[len - 1] == '\n', "ends with a newline");
	free(text);
}

static void test_listen(void)
{
	static const struct {
		const char *text;
		int family;
		const char *addr;
		unsigned int port;
	} good[] = {
	    {"9464", AF_INET, "127.0.0.1", 9464},    {":9464", AF_INET, "127.0.0.1", 9464},
	    {"0.0.0.0:80", AF_INET, "0.0.0.0", 80},  {"[::1]:9464", AF_INET6, "::1", 9464},
	    {"[fd00::1]:1", AF_INET6, "fd00::1", 1},
	};
	/* "::1" is no IPv6 host with a port: it needs brackets (it read as "::" port 1) */
	static const char *const bad[] = {"",	     "x",	    "1.2.3.4:",	   "1.2.3.4:65536",
					  "host:80", "[::1]:x",	    "1.2.3.4:80x", "::1",
					  " 9465",   "1.2.3.4:+80", "fd00::1:80"};
	struct sockaddr_storage ss;
	char err[160], addr[INET6_ADDRSTRLEN];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK_INT(metrics_parse_listen(good[i].text, &ss, err, sizeof(err)), 0, "%s: %s",
			  good[i].text, err);
		CHECK_INT(ss.ss_family, good[i].family, "%s", good[i].text);
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr,
				  sizeof(addr));
			CHECK_INT(ntohs(((struct sockaddr_in *)&ss)->sin_port), good[i].port, "%s",
				  good[i].text);
		} else {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr,
				  sizeof(addr));
			CHECK_INT(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), good[i].port,
				  "%s", good[i].text);
		}
		CHECK_STR(addr, good[i].addr, "%s", good[i].text);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_INT(metrics_parse_listen(bad[i], &ss, err, sizeof(err)), -EINVAL, "%s",
			  bad[i]);
		CHECK(strstr(err, "--metrics") != NULL, "%s: message \"%s\"", bad[i], err);
	}
}

static void test_probe_frame(void)
{
	struct probe_frame f = {.type = PROBE_REQUEST,
				.size = 1390,
				.seq = 0x01020304,
				.nonce = 99,
				.cluster = "lab",
				.sender = "pve1",
				.target = ""};
	struct probe_frame g;
	uint8_t buf[2000];

	CHECK_INT(probe_frame_encode(&f, buf, sizeof(buf)), 1390, "encode");
	CHECK_INT(probe_frame_decode(buf, 1390, &g), 0, "decode");
	CHECK_INT(g.type, PROBE_REQUEST, "type");
	CHECK_INT(g.seq, 0x01020304, "seq");
	CHECK_INT(g.nonce, 99, "nonce");
	CHECK_STR(g.cluster, "lab", "cluster");
	CHECK_STR(g.sender, "pve1", "sender");
	CHECK_STR(g.target, "", "target");
	CHECK_INT(probe_frame_decode(buf, 1389, &g), -EINVAL, "truncated");
	CHECK_INT(probe_frame_decode(buf, 1500, &g), 0, "padded by Ethernet");
	f.size = PROBE_HEADER_LEN - 1;
	CHECK_INT(probe_frame_encode(&f, buf, sizeof(buf)), 0, "smaller than the header");
	f.size = 1390;
	CHECK_INT(probe_frame_encode(&f, buf, 1000), 0, "does not fit");
	probe_frame_encode(&f, buf, sizeof(buf));
	buf[0] = 'X';
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "magic");
	buf[0] = 'F';
	buf[5] = 3;
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "type");
	buf[5] = PROBE_REPLY;
	buf[16] = '\n';
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "control character in a name");
	memset(buf + 16, 'a', 64);
	CHECK_INT(probe_frame_decode(buf, 1390, &g), -EINVAL, "name without its NUL");
}

int main(void)
{
	test_render();
	test_listen();
	test_probe_frame();
	return unit_summary("test_metrics");
}
