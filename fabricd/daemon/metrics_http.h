/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/metrics_http.h - serves the metrics text on GET /metrics
 * (libmicrohttpd). The daemon's loop publishes a finished text; requests are
 * answered from the last one published, or, when it is over a second old,
 * from the one the loop renders for them (metrics_http_fd).
 */
#ifndef FABRICD_DAEMON_METRICS_HTTP_H
#define FABRICD_DAEMON_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "daemon/metrics.h"

struct metrics_http;

/*
 * Parses "PORT", ":PORT" (both loopback: 127.0.0.1), "ADDR:PORT" or
 * "[V6ADDR]:PORT" into ss. 0, or -EINVAL with a message in err.
 */
int metrics_parse_listen(const char *text, struct sockaddr_storage *ss, char *err, size_t len);

/* Starts serving on ss. 0, or -errno (logged). */
int metrics_http_start(const struct sockaddr_storage *ss, struct metrics_http **out);
/*
 * Serves t's text from now on, from t's buffer (no copy). t gets the buffer
 * of the text served before to render into, or none while a response still
 * sends it (that one goes when the response is done).
 */
void metrics_http_publish(struct metrics_http *h, struct metrics_text *t);
/*
 * A pass ended (the loop's thread, as the renders): the next scrape asks for a
 * new text even within a second of the last, so that it counts the pass.
 */
void metrics_http_outdated(struct metrics_http *h);
/*
 * Readable (EPOLLIN) when a scrape waits for a text newer than the last
 * published; the loop then calls metrics_http_wanted().
 */
int metrics_http_fd(const struct metrics_http *h);
/* Reads the fd; true while a scrape waits for a render (until the next publish). */
bool metrics_http_wanted(struct metrics_http *h);
/* The port bound (useful with port 0). */
unsigned int metrics_http_port(const struct metrics_http *h);
void metrics_http_stop(struct metrics_http *h);

#endif
