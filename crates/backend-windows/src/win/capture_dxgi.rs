//! Screenshots through DXGI Desktop Duplication: one duplication per
//! display, its newest frame copied into a CPU-readable texture that is
//! kept, since a screen that does not change sends no new frame. Also the
//! Direct3D pieces Windows.Graphics.Capture shares: the device and that
//! staging texture.
//!
//! Written against the documented API and type-checked; not run: Wine's
//! `AcquireNextFrame` is not implemented, so there GDI captures.

use deskhand_backend::{BackendError, Bitmap, Point, Rect};
use windows::Win32::Foundation::HMODULE;
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_HARDWARE;
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_UNKNOWN;
use windows::Win32::Graphics::Direct3D11::{
    D3D11_BIND_FLAG, D3D11_CPU_ACCESS_READ, D3D11_CREATE_DEVICE_BGRA_SUPPORT, D3D11_MAP_READ,
    D3D11_MAPPED_SUBRESOURCE, D3D11_RESOURCE_MISC_FLAG, D3D11_SDK_VERSION, D3D11_TEXTURE2D_DESC,
    D3D11_USAGE_STAGING, D3D11CreateDevice, ID3D11Device, ID3D11DeviceContext, ID3D11Texture2D,
};
use windows::Win32::Graphics::Dxgi::Common::{
    DXGI_FORMAT_B8G8R8A8_UNORM, DXGI_MODE_ROTATION_IDENTITY, DXGI_MODE_ROTATION_UNSPECIFIED,
    DXGI_SAMPLE_DESC,
};
use windows::Win32::Graphics::Dxgi::{
    CreateDXGIFactory1, DXGI_ERROR_ACCESS_LOST, DXGI_ERROR_WAIT_TIMEOUT, DXGI_OUTDUPL_FRAME_INFO,
    IDXGIAdapter, IDXGIAdapter1, IDXGIFactory1, IDXGIOutput1, IDXGIOutputDuplication,
    IDXGIResource,
};
use windows::core::Interface;

use super::capture::Grab;

/// How long the first frame of a new duplication is waited for.
const FIRST_FRAME_MS: u32 = 200;

/// A D3D11 device (with BGRA support) on `adapter`, or on the default
/// adapter.
pub(super) fn d3d_device(
    adapter: Option<&IDXGIAdapter1>,
) -> Result<(ID3D11Device, ID3D11DeviceContext), String> {
    let (mut device, mut context) = (None, None);
    // An explicit adapter wants the UNKNOWN driver type.
    let driver = match adapter {
        Some(_) => D3D_DRIVER_TYPE_UNKNOWN,
        None => D3D_DRIVER_TYPE_HARDWARE,
    };
    let adapter = adapter
        .map(|a| a.cast::<IDXGIAdapter>())
        .transpose()
        .map_err(|e| format!("IDXGIAdapter: {}", e.message()))?;
    // SAFETY: out-parameters for the device and its context.
    unsafe {
        D3D11CreateDevice(
            adapter.as_ref(),
            driver,
            HMODULE::default(),
            D3D11_CREATE_DEVICE_BGRA_SUPPORT,
            None,
            D3D11_SDK_VERSION,
            Some(&mut device),
            None,
            Some(&mut context),
        )
    }
    .map_err(|e| format!("D3D11CreateDevice: {}", e.message()))?;
    match (device, context) {
        (Some(d), Some(c)) => Ok((d, c)),
        _ => Err("D3D11CreateDevice gave no device".into()),
    }
}

/// A CPU-readable texture the size of a captured one, holding the last
/// frame copied into it.
pub(super) struct Staging {
    texture: ID3D11Texture2D,
    width: u32,
    height: u32,
}

impl Staging {
    /// A staging texture of `width` × `height` BGRA pixels.
    pub(super) fn new(
        device: &ID3D11Device,
        width: u32,
        height: u32,
    ) -> Result<Self, BackendError> {
        let desc = D3D11_TEXTURE2D_DESC {
            Width: width,
            Height: height,
            MipLevels: 1,
            ArraySize: 1,
            Format: DXGI_FORMAT_B8G8R8A8_UNORM,
            SampleDesc: DXGI_SAMPLE_DESC {
                Count: 1,
                Quality: 0,
            },
            Usage: D3D11_USAGE_STAGING,
            BindFlags: D3D11_BIND_FLAG(0).0 as u32,
            CPUAccessFlags: D3D11_CPU_ACCESS_READ.0 as u32,
            MiscFlags: D3D11_RESOURCE_MISC_FLAG(0).0 as u32,
        };
        let mut texture = None;
        // SAFETY: a described texture, no initial data.
        unsafe { device.CreateTexture2D(&desc, None, Some(&mut texture)) }
            .map_err(|e| failed("CreateTexture2D", e))?;
        let texture = texture.ok_or_else(|| BackendError::Failed("no staging texture".into()))?;
        Ok(Self {
            texture,
            width,
            height,
        })
    }

    /// Its size in pixels.
    pub(super) fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Copies `from` (the same size, B8G8R8A8) into the staging texture.
    pub(super) fn copy_from(&self, context: &ID3D11DeviceContext, from: &ID3D11Texture2D) {
        // SAFETY: two textures of one size and format on one device.
        unsafe { context.CopyResource(&self.texture, from) };
    }

    /// Maps the copy and hands `rect` (desktop pixels) of it to `sink`,
    /// `origin` being where its top-left pixel is on the desktop.
    pub(super) fn hand_over(
        &self,
        context: &ID3D11DeviceContext,
        origin: Point,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<(), BackendError> {
        let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
        // SAFETY: a staging texture with CPU read access.
        unsafe { context.Map(&self.texture, 0, D3D11_MAP_READ, 0, Some(&mut mapped)) }
            .map_err(|e| failed("Map", e))?;
        let pitch = mapped.RowPitch as usize;
        // SAFETY: a mapped texture holds `RowPitch * height` bytes until
        // it is unmapped below.
        let all = unsafe {
            std::slice::from_raw_parts(mapped.pData.cast::<u8>(), pitch * self.height as usize)
        };
        let handed = super::capture::hand_over(all, pitch, origin, rect, sink);
        // SAFETY: mapped above.
        unsafe { context.Unmap(&self.texture, 0) };
        handed
    }
}

/// The error of a failed call.
fn failed(call: &str, e: windows::core::Error) -> BackendError {
    BackendError::Failed(format!("{call}: {}", e.message()))
}

/// One display's duplication and the last frame it sent.
struct Output {
    output: IDXGIOutput1,
    rect: Rect,
    device: ID3D11Device,
    context: ID3D11DeviceContext,
    duplication: Option<IDXGIOutputDuplication>,
    staging: Option<Staging>,
}

/// Desktop Duplication of every display attached to the desktop.
pub(super) struct DxgiGrab {
    outputs: Vec<Output>,
}

// SAFETY: the D3D11 device and DXGI objects are free-threaded; the grab is
// used by one thread at a time (through `&mut self`).
unsafe impl Send for DxgiGrab {}

/// Duplicates every display, or says why it cannot.
pub(super) fn open() -> Result<DxgiGrab, String> {
    // SAFETY: plain DXGI enumeration.
    let factory: IDXGIFactory1 = unsafe { CreateDXGIFactory1() }
        .map_err(|e| format!("CreateDXGIFactory1: {}", e.message()))?;
    let (mut outputs, mut index) = (Vec::new(), 0);
    // SAFETY: enumeration until DXGI says there are no more.
    while let Ok(adapter) = unsafe { factory.EnumAdapters1(index) } {
        index += 1;
        match outputs_of(&adapter) {
            Ok(found) => outputs.extend(found),
            Err(why) => tracing::debug!(%why, "an adapter's displays cannot be duplicated"),
        }
    }
    let mut grab = DxgiGrab { outputs };
    if grab.outputs.is_empty() {
        return Err("no display is attached to a DXGI adapter".into());
    }
    // Only a duplication that delivers a frame counts (Wine's does not).
    for o in &mut grab.outputs {
        o.refresh(FIRST_FRAME_MS).map_err(|e| e.to_string())?;
    }
    Ok(grab)
}

/// The displays of `adapter` that are part of the desktop, unrotated.
fn outputs_of(adapter: &IDXGIAdapter1) -> Result<Vec<Output>, String> {
    let mut found = Vec::new();
    let mut i = 0;
    // SAFETY: enumeration until DXGI says there are no more.
    while let Ok(output) = unsafe { adapter.EnumOutputs(i) } {
        i += 1;
        // SAFETY: a plain description read.
        let Ok(desc) = (unsafe { output.GetDesc() }) else {
            continue;
        };
        let rotated =
            ![DXGI_MODE_ROTATION_IDENTITY, DXGI_MODE_ROTATION_UNSPECIFIED].contains(&desc.Rotation);
        if !desc.AttachedToDesktop.as_bool() || rotated {
            continue;
        }
        let rect = super::displays::rect_of(&desc.DesktopCoordinates);
        let output = output
            .cast::<IDXGIOutput1>()
            .map_err(|e| format!("IDXGIOutput1: {}", e.message()))?;
        let (device, context) = d3d_device(Some(adapter))?;
        found.push(Output {
            output,
            rect,
            device,
            context,
            duplication: None,
            staging: None,
        });
    }
    Ok(found)
}

impl Output {
    /// Takes the newest frame into the staging texture, waiting at most
    /// `wait_ms` for one; keeps the last one when none came. Duplicates the
    /// display again when its duplication was lost.
    fn refresh(&mut self, wait_ms: u32) -> Result<(), BackendError> {
        let duplication = match &self.duplication {
            Some(d) => d.clone(),
            None => {
                // SAFETY: a device of this output's adapter.
                let d = unsafe { self.output.DuplicateOutput(&self.device) }
                    .map_err(|e| failed("DuplicateOutput", e))?;
                self.duplication = Some(d.clone());
                d
            }
        };
        let mut info = DXGI_OUTDUPL_FRAME_INFO::default();
        let mut resource: Option<IDXGIResource> = None;
        // SAFETY: out-parameters; the frame is released below.
        let acquired = unsafe { duplication.AcquireNextFrame(wait_ms, &mut info, &mut resource) };
        match acquired {
            Ok(()) => {}
            Err(e) if e.code() == DXGI_ERROR_WAIT_TIMEOUT && self.staging.is_some() => {
                return Ok(());
            }
            Err(e) => {
                if e.code() == DXGI_ERROR_ACCESS_LOST {
                    self.duplication = None;
                }
                return Err(failed("AcquireNextFrame", e));
            }
        }
        let copied = self.keep(resource);
        // SAFETY: the frame acquired above.
        let _ = unsafe { duplication.ReleaseFrame() };
        copied
    }

    /// Copies the frame's texture into the staging texture.
    fn keep(&mut self, resource: Option<IDXGIResource>) -> Result<(), BackendError> {
        let texture = resource
            .ok_or_else(|| BackendError::Failed("a frame without a texture".into()))?
            .cast::<ID3D11Texture2D>()
            .map_err(|e| failed("ID3D11Texture2D", e))?;
        let size = (self.rect.width, self.rect.height);
        if self.staging.as_ref().map(Staging::size) != Some(size) {
            self.staging = Some(Staging::new(&self.device, size.0, size.1)?);
        }
        if let Some(staging) = &self.staging {
            staging.copy_from(&self.context, &texture);
        }
        Ok(())
    }
}

impl Grab for DxgiGrab {
    fn method(&self) -> &'static str {
        "dxgi"
    }

    fn grab(
        &mut self,
        rect: Rect,
        sink: &mut dyn FnMut(&Bitmap<'_>),
    ) -> Result<bool, BackendError> {
        let Some(o) = self
            .outputs
            .iter_mut()
            .find(|o| o.rect.contains_rect(&rect))
        else {
            return Ok(false);
        };
        if let Err(e) = o.refresh(0) {
            // A desktop switch or a mode change: GDI this time, a new
            // duplication next time.
            tracing::debug!(error = %e, "no duplicated frame");
            return Ok(false);
        }
        let Some(staging) = &o.staging else {
            return Ok(false);
        };
        staging.hand_over(&o.context, Point::new(o.rect.x, o.rect.y), rect, sink)?;
        Ok(true)
    }
}
