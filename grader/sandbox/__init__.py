"""The only code that starts, confines or talks to processes that run untrusted code.
May import ``grader.contract`` and ``grader.core``. One job per module:

- in the grader: ``sandboxed_impl`` (the ``impl`` whose calls run in workers),
  ``sandboxes`` (a submission's sandbox and this process's sandboxes), ``handles`` (one
  worker process), ``listeners`` (what a worker says mid-request), ``writeback`` (what
  a call may change of its arguments), ``autograd_bridge`` (gradients across),
  ``zygote`` (start and talk to the zygote), ``launch`` (a clean interpreter),
  ``clock`` (the time a grading charges to a drill's budget);
- in the zygote and its workers: ``zygote_loop`` (fork a worker per request),
  ``worker`` (serve one exercise), ``channel`` (the worker's side of its socket),
  ``lockdown`` (the layers applied to the process itself), ``armor`` (forbidden
  APIs made unusable) and ``armor_audit`` (its audit hook);
- on both sides: ``wire`` (the plain-data format and its framing), ``encoding`` and
  ``decoding`` (values to messages and back, every check in ``decoding``),
  ``confine`` (the confinement layers: the plan, the probes, the bubblewrap command),
  ``pinning`` (grader and worker on one CPU).
"""
