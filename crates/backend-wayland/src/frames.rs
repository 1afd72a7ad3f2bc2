//! Frames of a ScreenCast stream, read from PipeWire on a thread of their
//! own (PipeWire's loop and stream are not `Send`). Shared memory only
//! (no DMA-BUF: the format names no modifier and the buffers ask for
//! MemFd or MemPtr); the newest frame is kept, since a still screen sends
//! none.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pipewire as pw;
use pw::spa;
use spa::buffer::{ChunkFlags, DataType};
use spa::param::ParamType;
use spa::param::format::{FormatProperties, MediaSubtype, MediaType};
use spa::param::video::{VideoFormat, VideoInfoRaw};
use spa::pod::{Object, Pod, Property, Value, serialize::PodSerializer};
use spa::utils::{Direction, Fraction, Rectangle, SpaTypes};

/// One frame, 4 bytes a pixel, blue first (BGRx).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) data: Vec<u8>,
    /// When it arrived.
    pub(crate) at: Instant,
}

/// The newest frame and a wake-up for whoever waits for the next one.
#[derive(Default)]
pub(crate) struct Latest {
    frame: Mutex<Option<Frame>>,
    cond: Condvar,
}

impl Latest {
    fn put(&self, frame: Frame) {
        if let Ok(mut f) = self.frame.lock() {
            *f = Some(frame);
        }
        self.cond.notify_all();
    }

    /// Runs `read` on the newest frame that arrived after `after` (any
    /// frame when `None`), waiting at most `wait` for one; on the newest
    /// there is when none newer comes.
    pub(crate) fn read<R>(
        &self,
        after: Option<Instant>,
        wait: Duration,
        read: impl FnOnce(&Frame) -> R,
    ) -> Option<R> {
        let guard = self.frame.lock().ok()?;
        let stale = |f: &mut Option<Frame>| match (f.as_ref(), after) {
            (None, _) => true,
            (Some(f), Some(t)) => f.at < t,
            (Some(_), None) => false,
        };
        let (guard, _) = self.cond.wait_timeout_while(guard, wait, stale).ok()?;
        guard.as_ref().map(read)
    }
}

/// The stream's reader; dropping it stops the thread.
pub(crate) struct Frames {
    pub(crate) latest: Arc<Latest>,
    quit: pw::channel::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Frames {
    /// Reads `node` through the PipeWire remote `fd` the portal opened.
    pub(crate) fn start(fd: OwnedFd, node: u32) -> std::io::Result<Self> {
        let latest = Arc::new(Latest::default());
        let (quit, quit_rx) = pw::channel::channel::<()>();
        let shared = latest.clone();
        let thread = std::thread::Builder::new()
            .name("deskhand-pipewire".into())
            .spawn(move || {
                if let Err(e) = run(fd, node, quit_rx, shared) {
                    tracing::warn!(error = %e, "the screencast stream ended");
                }
            })?;
        Ok(Self {
            latest,
            quit,
            thread: Some(thread),
        })
    }

    /// Whether the stream still runs.
    pub(crate) fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        let _ = self.quit.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct State {
    info: Option<VideoInfoRaw>,
    latest: Arc<Latest>,
}

fn pod_bytes(obj: Object) -> Result<Vec<u8>, pw::Error> {
    PodSerializer::serialize(std::io::Cursor::new(Vec::new()), &Value::Object(obj))
        .map(|(c, _)| c.into_inner())
        .map_err(|_| pw::Error::CreationFailed)
}

/// Raw video, blue first, any size and rate.
fn enum_format() -> Result<Vec<u8>, pw::Error> {
    pod_bytes(spa::pod::object!(
        SpaTypes::ObjectParamFormat,
        ParamType::EnumFormat,
        spa::pod::property!(FormatProperties::MediaType, Id, MediaType::Video),
        spa::pod::property!(FormatProperties::MediaSubtype, Id, MediaSubtype::Raw),
        spa::pod::property!(
            FormatProperties::VideoFormat,
            Choice,
            Enum,
            Id,
            VideoFormat::BGRx,
            VideoFormat::BGRx,
            VideoFormat::BGRA
        ),
        spa::pod::property!(
            FormatProperties::VideoSize,
            Choice,
            Range,
            Rectangle,
            Rectangle {
                width: 1920,
                height: 1080
            },
            Rectangle {
                width: 1,
                height: 1
            },
            Rectangle {
                width: 16384,
                height: 16384
            }
        ),
        spa::pod::property!(
            FormatProperties::VideoFramerate,
            Choice,
            Range,
            Fraction,
            Fraction { num: 60, denom: 1 },
            Fraction { num: 0, denom: 1 },
            Fraction {
                num: 1000,
                denom: 1
            }
        ),
    ))
}

/// Buffers in shared memory only.
fn shared_memory_buffers() -> Result<Vec<u8>, pw::Error> {
    let mask = (1i32 << spa::sys::SPA_DATA_MemFd) | (1i32 << spa::sys::SPA_DATA_MemPtr);
    pod_bytes(Object {
        type_: SpaTypes::ObjectParamBuffers.as_raw(),
        id: ParamType::Buffers.as_raw(),
        properties: vec![Property::new(
            spa::sys::SPA_PARAM_BUFFERS_dataType,
            Value::Int(mask),
        )],
    })
}

/// The rows of a mapped buffer: `width × height` pixels from `offset`,
/// `stride` bytes apart; `None` when they do not fit.
pub(crate) fn copy_rows(
    mem: &[u8],
    offset: usize,
    stride: usize,
    width: usize,
    height: usize,
) -> Option<Vec<u8>> {
    let row = width * 4;
    let stride = if stride == 0 { row } else { stride };
    if height == 0 || row > stride || offset + stride * (height - 1) + row > mem.len() {
        return None;
    }
    let mut data = Vec::with_capacity(row * height);
    for y in 0..height {
        data.extend_from_slice(&mem[offset + y * stride..][..row]);
    }
    Some(data)
}

fn on_param(stream: &pw::stream::Stream, st: &mut State, id: u32, param: Option<&Pod>) {
    let Some(param) = param else { return };
    if id != ParamType::Format.as_raw() {
        return;
    }
    let Ok((MediaType::Video, MediaSubtype::Raw)) = spa::param::format_utils::parse_format(param)
    else {
        return;
    };
    let mut info = VideoInfoRaw::new();
    if info.parse(param).is_err() {
        return;
    }
    tracing::info!(format = ?info.format(), width = info.size().width, height = info.size().height, "screencast format");
    st.info = Some(info);
    if let Ok(bytes) = shared_memory_buffers()
        && let Some(p) = Pod::from_bytes(&bytes)
    {
        let _ = stream.update_params(&mut [p]);
    }
}

fn on_process(stream: &pw::stream::Stream, st: &mut State) {
    let mut newest = None;
    while let Some(b) = stream.dequeue_buffer() {
        newest = Some(b);
    }
    let (Some(mut buf), Some(info)) = (newest, st.info) else {
        return;
    };
    let Some(d) = buf.datas_mut().first_mut() else {
        return;
    };
    if !matches!(d.type_(), DataType::MemFd | DataType::MemPtr) {
        return;
    }
    let c = d.chunk();
    if c.size() == 0 || c.flags().contains(ChunkFlags::CORRUPTED) {
        return;
    }
    let (w, h) = (info.size().width as usize, info.size().height as usize);
    let (offset, stride) = (c.offset() as usize, c.stride().max(0) as usize);
    let Some(mem) = d.data() else { return };
    if let Some(data) = copy_rows(mem, offset, stride, w, h) {
        st.latest.put(Frame {
            width: w as u32,
            height: h as u32,
            data,
            at: Instant::now(),
        });
    }
}

fn run(
    fd: OwnedFd,
    node: u32,
    quit_rx: pw::channel::Receiver<()>,
    latest: Arc<Latest>,
) -> Result<(), pw::Error> {
    let mainloop = pw::main_loop::MainLoopRc::new(None)?;
    let context = pw::context::ContextRc::new(&mainloop, None)?;
    let core = context.connect_fd_rc(fd, None)?;
    let ml = mainloop.clone();
    let _quit = quit_rx.attach(mainloop.loop_(), move |()| ml.quit());
    let ml = mainloop.clone();
    let _core_listener = core
        .add_listener_local()
        .error(move |id, _seq, res, msg| {
            tracing::warn!(id, res, msg, "PipeWire error");
            if id == pw::core::PW_ID_CORE {
                ml.quit();
            }
        })
        .register();
    let stream = pw::stream::StreamBox::new(
        &core,
        "deskhand-screencast",
        pw::properties::properties! {
            *pw::keys::MEDIA_TYPE => "Video",
            *pw::keys::MEDIA_CATEGORY => "Capture",
            *pw::keys::MEDIA_ROLE => "Screen",
        },
    )?;
    let ml = mainloop.clone();
    let _listener = stream
        .add_local_listener_with_user_data(State { info: None, latest })
        .state_changed(move |_, _, old, new| {
            tracing::debug!(?old, ?new, "screencast stream");
            if matches!(new, pw::stream::StreamState::Error(_)) {
                ml.quit();
            }
        })
        .param_changed(on_param)
        .process(on_process)
        .register()?;
    let format = enum_format()?;
    let flags = pw::stream::StreamFlags::AUTOCONNECT | pw::stream::StreamFlags::MAP_BUFFERS;
    let pod = Pod::from_bytes(&format).ok_or(pw::Error::CreationFailed)?;
    stream.connect(Direction::Input, Some(node), flags, &mut [pod])?;
    mainloop.run();
    let _ = stream.disconnect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_copied_without_the_stride_padding_and_never_past_the_buffer() {
        // 2×2 pixels, rows 12 bytes apart, from offset 4.
        let mem: Vec<u8> = (0..40).collect();
        let rows = copy_rows(&mem, 4, 12, 2, 2).expect("fits");
        assert_eq!(
            rows,
            [(4..12).collect::<Vec<u8>>(), (16..24).collect()].concat()
        );
        assert_eq!(copy_rows(&mem, 4, 12, 2, 4), None, "past the end");
        assert_eq!(
            copy_rows(&mem, 0, 4, 2, 2),
            None,
            "a stride shorter than a row"
        );
        assert_eq!(
            copy_rows(&mem, 0, 0, 2, 2).map(|r| r.len()),
            Some(16),
            "no stride: packed"
        );
    }

    #[test]
    fn a_reader_waits_for_a_frame_newer_than_the_input_and_else_takes_the_newest() {
        let latest = Latest::default();
        assert_eq!(
            latest.read(None, Duration::from_millis(1), |f| f.width),
            None
        );
        let before = Instant::now();
        latest.put(Frame {
            width: 1,
            height: 1,
            data: vec![0; 4],
            at: Instant::now(),
        });
        assert_eq!(
            latest.read(Some(before), Duration::ZERO, |f| f.width),
            Some(1)
        );
        let input = Instant::now();
        let waited = Instant::now();
        assert_eq!(
            latest.read(Some(input), Duration::from_millis(30), |f| f.width),
            Some(1)
        );
        assert!(
            waited.elapsed() >= Duration::from_millis(30),
            "waited for a newer one"
        );
    }
}
