# SPDX-License-Identifier: MIT
"""The mutants of tests/mutation/run-mutants: one small change to shim/ each.

Each entry:
  name     short name (--only NAME)
  file     the file under the source tree the edits apply to
  edits    [(find, replace), ...]: each `find` must occur exactly once in
           the file (a mutant whose text is gone fails loudly: update it)
  desc     one line: what the mutation breaks
  drm      regex over the drm case names (BUILD/tests/vm/drm-cases.manifest)
           of the focused selection expected to kill it
  host     optional regex over `meson test --suite host` names, also run
  survives optional: why the mutant is expected to survive (an equivalent
           mutant or one no test can observe, docs/testing.md "Mutation
           run"); a survivor without it is unexpected and fails the run
"""

MUTANTS = [
    # ---- the capture guard and the decision under it -------------------
    dict(name="sig-guard-skip", file="shim/dispatch.c",
         edits=[("acts on the answer. */\n\thx_capture_guard_enter();\n",
                 "acts on the answer. */\n\t/* mutant: no guard */\n"),
                ("\t\t\t\t\t\t\tHX_CAPTURE_STATUS_NONE);\n\thx_capture_guard_leave();\n",
                 "\t\t\t\t\t\t\tHX_CAPTURE_STATUS_NONE);\n\t/* mutant: no guard */\n")],
         desc="hx_intercept_signal takes no capture guard: a capture may begin between its decision and its enqueue",
         drm=r"^graph\.shim\.abi6\.(capture-come-go|capture-race|capture-modes|render-loop-binary)$"),
    dict(name="sig-decision-outside", file="shim/dispatch.c",
         edits=[("acts on the answer. */\n\thx_capture_guard_enter();\n"
                 "\t/* Cheapest first: with no capture live (one load) nothing else is\n"
                 "\t * asked; a live one implies the runtime was resolved. */\n"
                 "\tif (hs && n && hx_capture_live())\n",
                 "acts on the answer. */\n\tbool mut_live = hs && n && hx_capture_live();\n"
                 "\thx_capture_guard_enter();\n"
                 "\tif (mut_live)\n")],
         desc="hx_intercept_signal decides 'is a capture live?' before taking the guard",
         drm=r"^graph\.shim\.abi6\.(capture-come-go|capture-race|capture-modes|render-loop-binary)$",
         survives="nearly equivalent, and out of every harness's reach: the window between the "
                  "count's load and the guard holds no runtime call (the matrix and cpuhip's race "
                  "hooks act inside runtime calls), and a capture begun in it is still caught after "
                  "the enqueue (the settle check keeps the record, which signals at every launch); "
                  "what differs is a runtime host node instead of a semaphore node"),
    dict(name="wait-decision-outside", file="shim/dispatch.c",
         edits=[("before it blocks. */\n\thx_capture_guard_enter();\n"
                 "\t/* Cheapest first: with no capture live (one load) nothing else is\n"
                 "\t * asked; a live one implies the runtime was resolved. */\n"
                 "\tif (hs && n && hx_capture_live())\n",
                 "before it blocks. */\n\tbool mut_live = hs && n && hx_capture_live();\n"
                 "\thx_capture_guard_enter();\n"
                 "\tif (mut_live)\n")],
         desc="hx_intercept_wait decides 'is a capture live?' before taking the guard",
         drm=r"^graph\.shim\.abi6\.(capture-come-go|capture-race|capture-race-wait|capture-modes|render-loop-binary)$",
         survives="nearly equivalent, and out of every harness's reach: the window between the "
                  "count's load and the guard holds no runtime call, and a capture begun in it makes "
                  "the runtime refuse the stream wait (900), which the retry records into the "
                  "capture, as the guarded path would"),
    dict(name="begin-capture-unguarded", file="shim/graph.c",
         edits=[("\tguarded = hx_capture_guard_lock();\n"
                 "\thx_capture_count_begin();\n"
                 "\thx_noise();\n"
                 "\terr = real(stream, mode);\n",
                 "\tguarded = false;\n"
                 "\thx_capture_count_begin();\n"
                 "\thx_noise();\n"
                 "\terr = real(stream, mode);\n")],
         desc="hipStreamBeginCapture does not take the capture guard's writer lock",
         drm=r"^graph\.shim\.abi6\.(capture-come-go|capture-race|capture-race-wait|capture-modes)$"),
    # ---- live-capture bookkeeping ---------------------------------------
    dict(name="end-uncounts-always", file="shim/capture_guard.c",
         edits=[("\tif (!over)\n\t\treturn;\n", "\t(void)over;\n")],
         desc="capture_check_ended uncounts a capture without asking whether the stream still captures",
         drm=r"^graph\.shim\.abi6(-rocm6\.[03])?\.(end-twice|capture-modes|capture-come-go|invalidated-signal)$"),
    dict(name="began-not-recorded", file="shim/capture_guard.c",
         edits=[("static bool capture_began(struct capture_key k)\n{\n\tbool ok = true;\n",
                 "static bool capture_began(struct capture_key k)\n{\n\tbool ok = true;\n"
                 "\tif (ok)\n\t\treturn ok; /* mutant: not recorded */\n")],
         desc="capture_began records nothing: an end never uncounts, the count stays above 0",
         drm=r"^graph\.shim\.abi6(-rocm6\.[03])?\.(end-twice|capture-modes|capture-come-go|capture-idle|render-loop-binary)$"),
    # ---- references on error paths --------------------------------------
    dict(name="signal-err-unref-dropped", file="shim/signal.c",
         edits=[("\tif (err) {\n\t\tfor (unsigned i = 0; i < n; i++)\n\t\t\thx_sem_unref(op->entries[i].sem);\n",
                 "\tif (err) {\n")],
         desc="a refused signal (bad stream, timeline point 0) keeps its semaphore references",
         drm=r"^(hostile\.abi6\.(badinput|leak)|shim\.abi6\.(bad-handles|mixed-array))$"),
    dict(name="signal-err-unref-doubled", file="shim/signal.c",
         edits=[("\tif (err) {\n\t\tfor (unsigned i = 0; i < n; i++)\n\t\t\thx_sem_unref(op->entries[i].sem);\n",
                 "\tif (err) {\n\t\tfor (unsigned i = 0; i < n; i++)\n\t\t\thx_sem_unref(op->entries[i].sem);\n"
                 "\t\tfor (unsigned i = 0; i < n; i++)\n\t\t\thx_sem_unref(op->entries[i].sem);\n")],
         desc="a refused signal drops each semaphore reference twice",
         drm=r"^(hostile\.abi6\.(badinput|leak)|shim\.abi6\.(bad-handles|mixed-array))$"),
    dict(name="wait-err-unref-dropped", file="shim/wait.c",
         edits=[("unref:\n\tfor (unsigned i = 0; i < n; i++)\n\t\thx_sem_unref(op->entries[i].sem);\n",
                 "unref:\n")],
         desc="a wait refused after its handles were taken (bad stream) keeps its semaphore references",
         drm=r"^(hostile\.abi6\.(badinput|leak)|shim\.abi6\.(wait-bad-stream|bad-handles))$"),
    dict(name="hostwait-err-unref-dropped", file="shim/wait.c",
         edits=[("\t\t       (void *)stream);\n\t\tfor (unsigned i = 0; i < op->count; i++)\n"
                 "\t\t\thx_sem_unref(op->entries[i].sem);\n",
                 "\t\t       (void *)stream);\n")],
         desc="the host-blocking wait refusing a bad stream keeps its semaphore references",
         drm=r"^(shim-hostwait\.abi6\.(wait-bad-stream|bin-wait-pre)|streams-hostwait\.abi6\.dead-stream|hostile\.abi6\.badinput-hostwait)$"),
    # ---- resets -----------------------------------------------------------
    dict(name="waiter-reset-dropped", file="shim/waiter_objects.c",
         edits=[("\tret = hx_sync_reset(hx_w.dev, obj->handle);\n", "\tret = 0; /* mutant: no reset */\n")],
         desc="the waiter releases a binary wait without consuming (resetting) the signal",
         drm=r"^(shim-edge-eventfd\.abi6\.(bin-one|bin-refire)|shim\.abi6\.(bin-wait-pre|hip-to-hip-bin))$"),
    dict(name="waiter-reset-doubled", file="shim/waiter_objects.c",
         edits=[("\tret = hx_sync_reset(hx_w.dev, obj->handle);\n",
                 "\tret = hx_sync_reset(hx_w.dev, obj->handle);\n"
                 "\tif (!ret)\n\t\tret = hx_sync_reset(hx_w.dev, obj->handle);\n")],
         desc="the waiter resets a binary syncobj twice after a wait",
         drm=r"^(shim-edge-eventfd\.abi6\.(bin-one|bin-refire)|shim\.abi6\.(bin-wait-pre|hip-to-hip-bin|threads))$",
         survives="equivalent: a reset of an unsignaled binary syncobj changes nothing; only a signal "
                  "landing between the two ioctls could tell, and that signal belongs to the next "
                  "wait, which the first reset already let through to a new wait-for-submit"),
    dict(name="reset-drops-timeline", file="shim/sync.c",
         edits=[("\tif (point) {\n\t\tif (atomic_fetch_add_explicit(&resets_skipped",
                 "\tif (0 && point) {\n\t\tif (atomic_fetch_add_explicit(&resets_skipped")],
         desc="hx_sync_reset resets a binary semaphore's syncobj that carries timeline points",
         drm=r"^shim\.abi[56]\.syncfile$"),
    dict(name="signal-binary-always", file="shim/sync.c",
         edits=[("\tif (*last) {\n\t\tif (value <= *last)", "\tif (0 && *last) {\n\t\tif (value <= *last)")],
         desc="hx_sync_signal_binary always issues the binary signal (wipes a timeline imported as OpaqueFd)",
         drm=r"^shim\.abi[56]\.syncfile$"),
    dict(name="points-query-fail-open", file="shim/sync.c",
         edits=[("\t\treturn 0;\n\t}\n\treturn ret;\n}\n\nint hx_sync_signal_binary",
                 "\t\treturn 0;\n\t}\n\treturn 0;\n}\n\nint hx_sync_signal_binary")],
         desc="a failed points query before a binary signal or reset is taken for no points "
              "(the signal or reset drops the timeline)",
         drm=r"^shim-edge-(eventfd|multiwait)\.abi[56]\.tl-keep$"),
    dict(name="import-points-fail-open", file="shim/registry.c",
         edits=[("\t\tif (ret) {\n\t\t\thx_sync_destroy(&hx_reg.dev, handle);\n"
                 "\t\t\tpthread_mutex_unlock(&hx_reg.lock);\n"
                 "\t\t\thx_err(\"hipImportExternalSemaphore: fd %d: DRM_IOCTL_SYNCOBJ_QUERY",
                 "\t\tif (0) {\n\t\t\thx_sync_destroy(&hx_reg.dev, handle);\n"
                 "\t\t\tpthread_mutex_unlock(&hx_reg.lock);\n"
                 "\t\t\thx_err(\"hipImportExternalSemaphore: fd %d: DRM_IOCTL_SYNCOBJ_QUERY")],
         desc="a failed points query at import is taken for no points (a timeline imported "
              "as OpaqueFd becomes binary: its waits pass early, its signals are refused)",
         drm=r"^shim-edge-eventfd\.abi[56]\.tl-import$"),
    dict(name="poll-no-flush", file="shim/signal_poll.c",
         edits=[("\tif (!atomic_load_explicit(&poll_used, memory_order_acquire))\n\t\treturn;\n"
                 "\tpthread_mutex_lock(&P.run_lock);",
                 "\tif (1)\n\t\treturn;\n\tpthread_mutex_lock(&P.run_lock);")],
         desc="a host-function signal (graph node, captured, during a live capture) does not "
              "issue the reached poll signals first: it overtakes an earlier poll signal of "
              "its stream",
         drm=r"^shim-poll\.abi[56]\.poll-paths$"),
    dict(name="exit-hook-sticky", file="shim/wait.c",
         edits=[("\tif (final)\n\t\thx_reg.exiting = true;\n", "\thx_reg.exiting = true;\n")],
         desc="the exit hook's release makes every later wait pass at once: a wait of the "
              "program's own exit-time code passes before its semaphore is signaled",
         drm=r"^streams\.abi[56]\.exit-late-wait-(atexit|dtor)$"),
    dict(name="exit-hook-not-at-load", file="shim/streams.c",
         edits=[("\t(void)global_thread_atexit_get();\n\tif (on_main_thread())\n"
                 "\t\t(void)register_exit_hook();\n",
                 "\t(void)global_thread_atexit_get();\n")],
         desc="the exit hook is not put on the main thread's list at load: when main never "
              "calls the runtime, the waits pending at exit are released only after the "
              "program's later atexit handlers, and a wait one of them enqueues behind a "
              "pending one never passes",
         drm=r"^streams\.abi[56]\.exit-late-wait-worker$"),
    dict(name="fork-child-keeps-exit-state", file="shim/streams.c",
         edits=[("\tif (hx_exit_hook_state == 2)\n\t\thx_exit_hook_state = 0;\n", "")],
         desc="a child forked by a worker thread never sets the exit release up: its exit "
              "hangs on a wait pending on hipStreamPerThread",
         drm=r"^streams\.abi6\.exit-fork-worker$"),
    dict(name="thread-state-in-guard", file="shim/runtime.c",
         edits=[("\thx_rt_thread_ready = true;\n\tif (hx_runtime_init() && hx_runtime_usable() && hx_rt.GetDevice)",
                 "\thx_rt_thread_ready = true;\n\tif (0 && hx_runtime_init() && hx_runtime_usable() && hx_rt.GetDevice)")],
         desc="a thread's runtime state is made inside the capture guard: a fork from a "
              "dlopen'd constructor deadlocks",
         drm=r"^streams\.abi6\.fork-ctor-(signal|wait)$"),
    dict(name="runtime-lookups-in-once", file="shim/runtime.c",
         edits=[("\t\tif (!atomic_load_explicit(&rt_staged, memory_order_acquire)) {",
                 "\t\tif (0 && !atomic_load_explicit(&rt_staged, memory_order_acquire)) {")],
         desc="the runtime's look-ups (dlsym, which takes glibc's loader lock) are made "
              "inside the once: a first call racing a plugin constructor's deadlocks",
         drm=r"^streams\.abi6\.fork-ctor-first$"),
    dict(name="fork-keeps-pts-helper", file="shim/streams.c",
         edits=[("\ttls_helper.stream = NULL;\n\ttls_helper.event = NULL;\n", "")],
         desc="a fork child keeps the forking thread's 5.2 per-thread helper stream, the "
              "parent's: the child's waits on hipStreamPerThread never pass",
         drm=r"^streams\.abi5\.fork-pts-used$"),
    dict(name="poll-exit-waits-new", file="shim/signal_poll.c",
         edits=[("\tP.draining = true;\n\tlast_done = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);",
                 "\tlast_done = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);")],
         desc="the poll thread's exit drain takes new signals too: a thread that goes on "
              "signaling holds exit() up for ever",
         drm=r"^shim-poll\.abi[56]\.poll-exit-busy$"),
    dict(name="poll-exit-progress-per-batch", file="shim/signal_poll.c",
         edits=[("\t\tn++;\n\t\t__atomic_add_fetch(&P.ran, 1, __ATOMIC_RELAXED);\n", "\t\tn++;\n")],
         desc="the poll exit drain sees progress only when a batch ends: a long batch of "
              "slow ioctls is cut off and its reached signals are lost",
         drm=r"^shim-poll\.abi[56]\.poll-exit-slow$"),
    dict(name="poll-exit-drain-per-batch", file="shim/signal_poll.c",
         edits=[("\t\twait_until(&P.progress, hx_now_ns() + 50000000LL);\n"
                 "\t\tran = __atomic_load_n(&P.ran, __ATOMIC_RELAXED);",
                 "\t\twait_until(&P.progress, hx_now_ns() + 50000000LL);\n"
                 "\t\tran = P.signaled;")],
         desc="the poll exit drain's first wait sees progress only when a batch ends: "
              "a record still on the list while a long batch runs is cut off",
         drm=r"^shim-poll\.abi[56]\.poll-exit-held$"),
    dict(name="poll-held-table-full", file="shim/signal_poll.c",
         edits=[("\t\tif (!held && nblocked == cap)\n"
                 "\t\t\tfor (struct poll_rec *t = P.head; t != r && !held; t = t->next)\n"
                 "\t\t\t\theld = t->key == r->key;\n",
                 "\t\tif (!held && nblocked == MAX_BLOCKED)\n\t\t\theld = true;\n"),
                ("\t\t\tuintptr_t *more = malloc(2 * cap * sizeof(*more));\n",
                 "\t\t\tuintptr_t *more = NULL;\n")],
         desc="once 64 streams hold poll signals, a reached signal of any other stream is held "
              "too (a deadlock when they wait for it)",
         drm=r"^shim-poll\.abi[56]\.poll-many-held$"),
    dict(name="update-drops-armed", file="shim/graph_exec.c",
         edits=[("\t\tgw_carry_armed_locked(gexec_find_locked(exec), nx, exec);\n", "")],
         desc="hipGraphExecUpdate drops the wait a refused launch queued: it takes the signal "
              "meant for the next launch",
         drm=r"^graph\.shim\.abi6\.update-armed$"),
    # ---- streams ----------------------------------------------------------
    dict(name="destroy-keeps-check-cache", file="shim/streams.c",
         edits=[("\tatomic_fetch_add_explicit(&hx_streams_destroyed, 1, memory_order_acq_rel);\n", "")],
         desc="hx_stream_destroy does not invalidate the remembered stream checks",
         drm=r"^(streams\.abi6\.dead-stream|streams\.abi6-rocm6\.[02]\.legacy|hostile\.abi6\.(badinput|teardown)|shim\.abi6\.(special-streams|wait-bad-stream))$"),
    dict(name="atexit-not-reregistered", file="shim/streams.c",
         edits=[("\tif (ret == 0 && fn != exit_hook && on_main_thread())\n"
                 "\t\t(void)register_exit_hook();\n", "")],
         desc="hx_thread_atexit_impl does not re-register the exit hook after others' thread_local destructors",
         drm=r"^streams\.abi[56]\.exit-"),
    dict(name="canonical-identity", file="shim/streams.h",
         edits=[("\treturn stream == hipStreamLegacy ? NULL : stream;\n", "\treturn stream;\n")],
         desc="hx_stream_canonical passes hipStreamLegacy through unchanged",
         drm=r"^streams\.abi(5|6|6-rocm6\.[02])\.legacy$"),
    # ---- handles ----------------------------------------------------------
    dict(name="shim-handle-needs-live", file="shim/handles.c",
         edits=[("\treturn (v & HANDLE_TAG_MASK) == HANDLE_TAG && (v & INDEX_MASK) != 0;\n",
                 "\tstruct hx_sem *mut = hx_acquire(h);\n\n"
                 "\tif (mut)\n\t\thx_sem_unref(mut);\n"
                 "\treturn (v & HANDLE_TAG_MASK) == HANDLE_TAG && (v & INDEX_MASK) != 0 && mut;\n")],
         desc="hx_op_is_shim_handle answers only for live handles: a destroyed one reaches the runtime's node call",
         drm=r"^graph\.shim(-emptyslot)?\.abi6(-rocm7\.2)?\.dead-handle-node$"),
    # ---- records kept or freed wrongly ------------------------------------
    dict(name="signal-settled-not-freed", file="shim/signal.c",
         edits=[("\tif (st == SIG_SETTLED)\n\t\tsignal_free(op);\n", "")],
         desc="run_signal keeps a settled signal's record (and its semaphore references) after it ran",
         drm=r"^(hostile\.abi6\.leak|shim\.abi6\.(many|destroy-pending))$"),
    dict(name="signal-ran-not-freed", file="shim/signal.c",
         edits=[("\telse if (prev == SIG_RAN)\n\t\tsignal_free(op);\n", "")],
         desc="hx_op_signal_settle keeps the record when the host function ran before the caller settled",
         drm=r"^(hostile\.abi6\.leak|shim\.abi6\.(many|destroy-pending))$"),
    dict(name="signal-kept-freed", file="shim/signal.c",
         edits=[("kept ? SIG_KEPT : SIG_SETTLED,", "SIG_SETTLED,")],
         desc="a signal record a capture may have recorded is freed after its first run",
         drm=r"^graph\.shim\.abi6\.(capture-come-go|capture-race)$"),
    dict(name="wait-op-not-freed", file="shim/wait.c",
         edits=[("\tif (!hb) {\n\t\thx_reg_op_free(HX_OP_WAIT, op);\n\t\treturn;\n",
                 "\tif (!hb) {\n\t\treturn;\n")],
         desc="op_release never frees a completed stream wait's record",
         drm=r"^(hostile\.abi6\.leak|shim\.abi6\.(many|destroy-pending))$"),
    # ---- fault paths that leak ----------------------------------------------
    dict(name="import-syncfile-tl-leak", file="shim/registry.c",
         edits=[("\tif (sync_file && timeline) {\n\t\thx_sync_destroy(&hx_reg.dev, handle);\n",
                 "\tif (sync_file && timeline) {\n")],
         desc="a sync_file refused as TimelineSemaphoreFd leaves its kernel syncobj handle behind",
         drm=r"^(shim\.abi6\.syncfile|hostile\.abi6\.(badinput|leak))$"),
    dict(name="import-fd-not-closed", file="shim/registry.c",
         edits=[("\tclose(fd);\n\tif (as_timeline) {\n", "\tif (as_timeline) {\n")],
         desc="a successful import does not close the descriptor it took",
         drm=r"^(shim\.abi6\.fd-ownership|hostile\.abi6\.(leak|badinput))$"),
    # ---- fork ---------------------------------------------------------------
    dict(name="fork-handlers-removed", file="shim/registry.c",
         edits=[("\tpthread_atfork(fork_prepare, fork_parent, fork_child);\n",
                 "\t(void)fork_prepare;\n\t(void)fork_parent;\n\t(void)fork_child;\n")],
         desc="the registry's fork handlers are never registered: a child inherits the parent's state",
         drm=r"^(hostile\.abi6\.(fork|fork-multiwait|ctor-fork)|shim\.abi6\.two-processes|graph\.shim\.abi6\.fork-graph)$"),
    dict(name="graph-fork-handlers-removed", file="shim/graph_fork.c",
         edits=[("\tpthread_atfork(graph_fork_prepare, graph_fork_release, graph_fork_release);\n",
                 "\t(void)graph_fork_prepare;\n\t(void)graph_fork_release;\n")],
         desc="the graph locks and the capture guard are not taken across fork()",
         drm=r"^(hostile\.abi6\.(fork|fork-multiwait|ctor-fork)|graph\.shim\.abi6\.fork-graph)$"),
    dict(name="guard-writer-no-window", file="shim/capture_guard.c",
         edits=[("\tint64_t give_up = guard_now_ns() + (HX_GUARD_WRITER_PATIENCE_NS << shift);\n",
                 "\tint64_t give_up = INT64_MAX + 0 * shift;\n")],
         desc="a capture's begin never lets the calls queued behind it through while a call is held in the runtime",
         drm=r"^graph\.shim\.abi6\.(held-call|capture-come-go|capture-race)$"),
    dict(name="update-no-placeholder", file="shim/graph_exec.c",
         edits=[("\tif (ok && !x && nx) {\n", "\tif (ok && !x && nx && 0) {\n")],
         desc="an exec with no records destroyed during its update gets the new graph's records",
         drm=r"^graph\.shim\.abi6\.(exec-update-destroyed|exec-update)$"),
]
