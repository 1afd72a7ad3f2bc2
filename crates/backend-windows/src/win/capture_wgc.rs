//! Screenshots through Windows.Graphics.Capture, Microsoft's current
//! capture API, tried before Desktop Duplication: one session per monitor,
//! started when a screenshot first falls on it, its newest frame copied
//! into a CPU-readable texture that is kept, since a screen that does not
//! change sends no new frame. Written against the documented API and
//! type-checked; not run: Wine has no Windows.Graphics.Capture.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use deskhand_backend::{BackendError, Bitmap, Point, Rect};
use windows::Foundation::TypedEventHandler;
use windows::Graphics::Capture::{
    Direct3D11CaptureFrame, Direct3D11CaptureFramePool, GraphicsCaptureItem, GraphicsCaptureSession,
};
use windows::Graphics::DirectX::Direct3D11::IDirect3DDevice;
use windows::Graphics::DirectX::DirectXPixelFormat;
use windows::Win32::Foundation::POINT;
use windows::Win32::Graphics::Direct3D11::{
    D3D11_TEXTURE2D_DESC, ID3D11Device, ID3D11DeviceContext, ID3D11Texture2D,
};
use windows::Win32::Graphics::Dxgi::IDXGIDevice;
use windows::Win32::Graphics::Gdi::{
    GetMonitorInfoW, HMONITOR, MONITOR_DEFAULTTONULL, MONITOR_DEFAULTTOPRIMARY, MONITORINFO,
    MonitorFromPoint,
};
use windows::Win32::System::WinRT::Direct3D11::{
    CreateDirect3D11DeviceFromDXGIDevice, IDirect3DDxgiInterfaceAccess,
};
use windows::Win32::System::WinRT::Graphics::Capture::IGraphicsCaptureItemInterop;
use windows::core::{IInspectable, Interface, Ref};

use super::capture::Grab;
use super::capture_dxgi::{Staging, d3d_device};
use super::displays::rect_of;
use super::failed;

/// The frames' pixel format, the staging texture's.
const FORMAT: DirectXPixelFormat = DirectXPixelFormat::B8G8R8A8UIntNormalized;
/// Buffers per frame pool: one frame held, one being drawn.
const BUFFERS: i32 = 2;
/// How long a new capture's first frame is waited for.
const FIRST_FRAME: Duration = Duration::from_millis(200);

/// The newest frame a pool delivered, not yet copied.
type Latest = Arc<Mutex<Option<Direct3D11CaptureFrame>>>;

/// Windows.Graphics.Capture of the monitors screenshots fall on.
pub(super) struct WgcGrab {
    device: ID3D11Device,
    context: ID3D11DeviceContext,
    captures: Vec<MonitorCapture>,
}

/// One monitor's capture session and the last frame it sent.
struct MonitorCapture {
    /// The monitor's handle, as a number (it changes with the layout).
    monitor: isize,
    /// The monitor's rectangle on the desktop when the capture started.
    area: Rect,
    /// Kept alive as long as its session, as Microsoft's samples do.
    _item: GraphicsCaptureItem,
    pool: Direct3D11CaptureFramePool,
    session: GraphicsCaptureSession,
    /// The `FrameArrived` registration, removed on drop.
    token: i64,
    latest: Latest,
    /// A copy of the last frame, `None` until one arrived.
    staging: Option<Staging>,
}

/// Starts capturing the primary monitor, or says why this system cannot.
pub(super) fn open() -> Result<WgcGrab, String> {
    let supported = GraphicsCaptureSession::IsSupported()
        .map_err(|e| format!("GraphicsCaptureSession::IsSupported: {}", e.message()))?;
    if !supported {
        return Err("GraphicsCaptureSession::IsSupported() is false".into());
    }
    let (device, context) = d3d_device(None)?;
    let mut grab = WgcGrab {
        device,
        context,
        captures: Vec::new(),
    };
    // One capture now: where that fails, DXGI is tried instead of GDI.
    // SAFETY: a plain call.
    let primary = unsafe { MonitorFromPoint(POINT::default(), MONITOR_DEFAULTTOPRIMARY) };
    let area = monitor_area(primary).ok_or("GetMonitorInfoW failed for the primary monitor")?;
    grab.capture_of(primary, area).map_err(|e| e.to_string())?;
    Ok(grab)
}

/// The monitor holding all of `rect`, with its rectangle.
fn monitor_holding(rect: Rect) -> Option<(HMONITOR, Rect)> {
    let (x, y) = (rect.x, rect.y);
    // SAFETY: a plain call.
    let monitor = unsafe { MonitorFromPoint(POINT { x, y }, MONITOR_DEFAULTTONULL) };
    let area = monitor_area(monitor)?;
    area.contains_rect(&rect).then_some((monitor, area))
}

/// A monitor's rectangle on the desktop.
fn monitor_area(monitor: HMONITOR) -> Option<Rect> {
    let mut info = MONITORINFO {
        cbSize: std::mem::size_of::<MONITORINFO>() as u32,
        ..Default::default()
    };
    // SAFETY: a sized out-parameter.
    let ok = unsafe { GetMonitorInfoW(monitor, &mut info) };
    ok.as_bool().then(|| rect_of(&info.rcMonitor))
}

/// The WinRT face of `device`, which frame pools take.
fn winrt_device(device: &ID3D11Device) -> Result<IDirect3DDevice, BackendError> {
    let dxgi = device.cast::<IDXGIDevice>().map_err(fail("IDXGIDevice"))?;
    // SAFETY: a live DXGI device.
    unsafe { CreateDirect3D11DeviceFromDXGIDevice(&dxgi) }
        .map_err(fail("CreateDirect3D11DeviceFromDXGIDevice"))?
        .cast::<IDirect3DDevice>()
        .map_err(fail("IDirect3DDevice"))
}

/// A `map_err` turning a failed `call` into a backend error.
fn fail(call: &'static str) -> impl FnOnce(windows::core::Error) -> BackendError {
    move |e| failed(call, e)
}

/// Locks `latest`; a panic elsewhere leaves a frame or none, both fine.
fn lock(latest: &Latest) -> MutexGuard<'_, Option<Direct3D11CaptureFrame>> {
    latest.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A `FrameArrived` handler keeping only the newest frame in `latest`,
/// so that the pool always has a free buffer for the next one.
fn keep_newest(latest: Latest) -> TypedEventHandler<Direct3D11CaptureFramePool, IInspectable> {
    TypedEventHandler::new(move |pool: Ref<'_, Direct3D11CaptureFramePool>, _| {
        let frame = pool.as_ref().and_then(|p| p.TryGetNextFrame().ok());
        if let Some(old) = frame.and_then(|f| lock(&latest).replace(f)) {
            let _ = old.Close();
        }
        Ok(())
    })
}

impl WgcGrab {
    /// The index of the capture of `monitor` (at `area`), started if need
    /// be; captures of an older layout overlapping it are stopped.
    fn capture_of(&mut self, monitor: HMONITOR, area: Rect) -> Result<usize, BackendError> {
        let handle = monitor.0 as isize;
        let same = |c: &MonitorCapture| c.monitor == handle && c.area == area;
        if let Some(index) = self.captures.iter().position(same) {
            return Ok(index);
        }
        self.captures.retain(|c| c.area.overlap_area(&area) == 0);
        let capture = MonitorCapture::start(monitor, area, &self.device)?;
        self.captures.push(capture);
        Ok(self.captures.len() - 1)
    }
}

impl MonitorCapture {
    /// Starts capturing `monitor`, without the pointer and, where Windows
    /// allows it, without the yellow border.
    fn start(monitor: HMONITOR, area: Rect, device: &ID3D11Device) -> Result<Self, BackendError> {
        let interop = windows::core::factory::<GraphicsCaptureItem, IGraphicsCaptureItemInterop>()
            .map_err(fail("IGraphicsCaptureItemInterop"))?;
        // SAFETY: a monitor handle `MonitorFromPoint` returned.
        let item: GraphicsCaptureItem =
            unsafe { interop.CreateForMonitor(monitor) }.map_err(fail("CreateForMonitor"))?;
        let size = item.Size().map_err(fail("GraphicsCaptureItem::Size"))?;
        let d3d = winrt_device(device)?;
        let pool = Direct3D11CaptureFramePool::CreateFreeThreaded(&d3d, FORMAT, BUFFERS, size)
            .map_err(fail("CreateFreeThreaded"))?;
        let latest = Latest::default();
        let token = pool
            .FrameArrived(&keep_newest(latest.clone()))
            .map_err(fail("FrameArrived"))?;
        let session = pool
            .CreateCaptureSession(&item)
            .map_err(fail("CreateCaptureSession"))?;
        // From here on, dropping `capture` stops the session.
        let capture = Self {
            monitor: monitor.0 as isize,
            area,
            _item: item,
            pool,
            session,
            token,
            latest,
            staging: None,
        };
        let session = &capture.session;
        session
            .SetIsCursorCaptureEnabled(false)
            .map_err(fail("SetIsCursorCaptureEnabled"))?;
        if let Err(e) = session.SetIsBorderRequired(false) {
            tracing::debug!(error = %e, "the capture border cannot be hidden");
        }
        session.StartCapture().map_err(fail("StartCapture"))?;
        Ok(capture)
    }

    /// The frame that arrived since the last look, waiting up to
    /// `FIRST_FRAME` while none was ever copied.
    fn newest_frame(&self) -> Option<Direct3D11CaptureFrame> {
        let deadline = Instant::now() + FIRST_FRAME;
        loop {
            let frame = lock(&self.latest).take();
            if frame.is_some() || self.staging.is_some() || Instant::now() >= deadline {
                return frame;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Copies `frame` into the staging texture; `false` (and the pool
    /// remade) when the monitor's size is no longer the pool's.
    fn keep(
        &mut self,
        frame: &Direct3D11CaptureFrame,
        device: &ID3D11Device,
        context: &ID3D11DeviceContext,
    ) -> Result<bool, BackendError> {
        let access = frame
            .Surface()
            .and_then(|s| s.cast::<IDirect3DDxgiInterfaceAccess>())
            .map_err(fail("IDirect3DDxgiInterfaceAccess"))?;
        // SAFETY: the frame's surface, alive while `frame` is open.
        let texture =
            unsafe { access.GetInterface::<ID3D11Texture2D>() }.map_err(fail("GetInterface"))?;
        let mut desc = D3D11_TEXTURE2D_DESC::default();
        // SAFETY: an out-parameter.
        unsafe { texture.GetDesc(&mut desc) };
        let content = frame.ContentSize().map_err(fail("ContentSize"))?;
        if (content.Width as u32, content.Height as u32) != (desc.Width, desc.Height) {
            self.pool
                .Recreate(&winrt_device(device)?, FORMAT, BUFFERS, content)
                .map_err(fail("Recreate"))?;
            self.staging = None;
            return Ok(false);
        }
        let staging = match self.staging.take() {
            Some(s) if s.size() == (desc.Width, desc.Height) => s,
            _ => Staging::new(device, desc.Width, desc.Height)?,
        };
        staging.copy_from(context, &texture);
        self.staging = Some(staging);
        Ok(true)
    }
}

impl Drop for MonitorCapture {
    fn drop(&mut self) {
        let _ = self.pool.RemoveFrameArrived(self.token);
        let _ = self.session.Close();
        if let Some(frame) = lock(&self.latest).take() {
            let _ = frame.Close();
        }
        let _ = self.pool.Close();
    }
}

impl Grab for WgcGrab {
    fn method(&self) -> &'static str {
        "wgc"
    }

    fn grab(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<bool, BackendError> {
        let Some((monitor, area)) = monitor_holding(rect) else {
            return Ok(false);
        };
        let index = self.capture_of(monitor, area)?;
        let capture = &mut self.captures[index];
        if let Some(frame) = capture.newest_frame() {
            let kept = capture.keep(&frame, &self.device, &self.context);
            let _ = frame.Close();
            if !kept? {
                return Ok(false);
            }
        }
        let Some(staging) = &capture.staging else {
            tracing::debug!("no captured frame yet");
            return Ok(false);
        };
        // A capture in other pixels than the monitor's rectangle (a
        // process that is not DPI-aware) cannot be cropped: GDI does it.
        if staging.size() != (area.width, area.height) {
            return Ok(false);
        }
        staging.hand_over(&self.context, Point::new(area.x, area.y), rect, sink)?;
        Ok(true)
    }
}
