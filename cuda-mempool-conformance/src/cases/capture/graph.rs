//! Capturing a stream into a graph, and what a capture leaves: the graph, its instantiation and a
//! graph allocation kept live, each given back on drop.

use crate::cases::prelude::*;

use CUstreamCaptureMode as M;

/// The three capture modes, by name.
pub(super) const MODES: &[(&str, M)] = &[
    ("global", M::CU_STREAM_CAPTURE_MODE_GLOBAL),
    ("thread_local", M::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
    ("relaxed", M::CU_STREAM_CAPTURE_MODE_RELAXED),
];

/// A graph; destroyed on drop.
pub(crate) struct Graph(pub(crate) CUgraph);
impl Drop for Graph {
    fn drop(&mut self) {
        let _ = unsafe { cuGraphDestroy(self.0) };
    }
}

/// An instantiated graph; destroyed on drop.
pub(crate) struct Exec(pub(crate) CUgraphExec);
impl Exec {
    pub(crate) fn new(g: &Graph, flags: u64) -> R<Exec> {
        let mut e = std::ptr::null_mut();
        ok("cuGraphInstantiateWithFlags", unsafe {
            cuGraphInstantiateWithFlags(&mut e, g.0, flags)
        })?;
        Ok(Exec(e))
    }
    pub(crate) fn launch(&self, s: CUstream) -> CUresult {
        unsafe { cuGraphLaunch(self.0, s) }
    }
}
impl Drop for Exec {
    fn drop(&mut self) {
        let _ = unsafe { cuGraphExecDestroy(self.0) };
    }
}

pub(super) fn status(s: CUstream) -> R<CUstreamCaptureStatus> {
    let mut st = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    ok("cuStreamIsCapturing", unsafe { cuStreamIsCapturing(s, &mut st) })?;
    Ok(st)
}

/// Capture `work` on `s` in `mode`. The capture is ended whatever `work` returns; the graph comes
/// back with `work`'s value and what cuStreamEndCapture answered.
pub(crate) fn capture<T>(
    s: CUstream,
    mode: M,
    work: impl FnOnce(CUstream) -> R<T>,
) -> R<(R<T>, CUresult, Option<Graph>)> {
    /// Ends the capture if `work` panics (the stream would stay capturing for the next trial).
    struct Open(CUstream, bool);
    impl Drop for Open {
        fn drop(&mut self) {
            if self.1 {
                let mut g = std::ptr::null_mut();
                unsafe {
                    let _ = cuStreamEndCapture(self.0, &mut g);
                    if !g.is_null() {
                        let _ = cuGraphDestroy(g);
                    }
                }
            }
        }
    }
    ok("cuStreamBeginCapture", unsafe { cuStreamBeginCapture_v2(s, mode) })?;
    let mut open = Open(s, true);
    let out = work(s);
    open.1 = false;
    let mut g = std::ptr::null_mut();
    let end = unsafe { cuStreamEndCapture(s, &mut g) };
    Ok((out, end, (!g.is_null()).then_some(Graph(g))))
}

/// A graph allocation live after a launch (or a pool's allocation a trial keeps live): freed (and
/// the stream synchronised) on every path, so that a failing check leaves no memory behind for the
/// worker's next trial.
pub(super) struct LiveGraphAlloc<'a> {
    pub(super) p: CUdeviceptr,
    pub(super) s: &'a Stream,
    pub(super) live: bool,
}
impl LiveGraphAlloc<'_> {
    pub(super) fn free(&mut self) -> R {
        self.live = false;
        free_async(self.p, self.s.0)?;
        self.s.sync()
    }
}
impl Drop for LiveGraphAlloc<'_> {
    fn drop(&mut self) {
        if self.live {
            unsafe {
                let _ = cuMemFreeAsync(self.p, self.s.0);
                let _ = cuStreamSynchronize(self.s.0);
            }
        }
    }
}
