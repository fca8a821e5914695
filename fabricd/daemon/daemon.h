/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/daemon.h - `fabricd run`: converge, then follow the definition file and the
 * kernel, and repair drift within a second. Stopping it leaves the dataplane
 * up; starting it again adopts what is there.
 */
#ifndef FABRICD_DAEMON_H
#define FABRICD_DAEMON_H

#include "engine/options.h"

/*
 * Runs until SIGTERM or SIGINT (exit status 0). Returns 1 when it cannot
 * start: the definition is not valid, this node is not in it, the key does
 * not match, or the first convergence fails (each logged with what to do).
 */
int daemon_run(const struct options *o);

#endif
