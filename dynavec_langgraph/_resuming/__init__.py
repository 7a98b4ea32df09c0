"""The guarded resume: the one way a decision reaches a paused thread.

``ReActAgent.resume`` and its async and streaming twins, the inbox (``inbox.resume_graph``,
``dynavec-langgraph inbox answer``) and the command line's ``resume`` all answer a pause
through :func:`resuming` (or its async twin :func:`aresuming`), which, in this order:

1. takes the thread's lock (:mod:`dynavec_langgraph._persistence.locks`) without waiting:
   :class:`~dynavec_langgraph._errors.ConcurrentResumeError` if another caller holds it;
2. reads the thread from the saver *under the lock*, so what it checks stays true until the
   caller is done (a record it cannot read: :class:`~dynavec_langgraph._errors.StorageError`);
3. checks the thread (:func:`plan_resume`): unknown or not paused →
   :class:`~dynavec_langgraph._errors.NothingToResumeError`; a pending call of a tool the graph
   does not have → :class:`~dynavec_langgraph._errors.InvalidDecisionError` (resumed with the
   wrong agent, the approval would be lost); a run that stopped without a pause (its process
   died) is finished, or refused, as the caller asks;
4. builds the ``Command(resume=...)`` from the answer (:meth:`Answer.command`): no decision,
   ``None``, one decision for several pauses, ``decisions`` that name what is not pending, a
   value the saver cannot store → ``InvalidDecisionError``, all before anything runs;
5. while the caller runs the graph: a decision the pause's ``response_schema`` refuses →
   ``InvalidDecisionError`` (nothing saved); a storage failure →
   :class:`~dynavec_langgraph._errors.StorageError` naming the tool calls that ran
   (:func:`storage_guard`);
6. :meth:`Resume.settle`: the same approval asked again (the paused tool refused the
   decision) → ``InvalidDecisionError``, the thread still paused.

Every error is a :class:`~dynavec_langgraph._errors.DynavecError` and is what it is for every
caller: the inbox and the command line print it, they do not re-wrap it.

One module per part: ``answers`` (``Answer`` and the command it becomes, ``Resume``, what the
pauses pending after the run say of the decision, the in-doubt question first), ``checks``
(the checks of the thread as read: a pause of another graph, damaged records,
``plan_resume``), ``reading`` (the thread read under the lock, ``storage_guard``) and
``guarded`` (``resuming`` / ``aresuming``, and the calls saved when a caller is cancelled).
"""
