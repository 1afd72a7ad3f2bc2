//! Screenshots from the Screenshot portal, where the desktop's portal has
//! no ScreenCast: one non-interactive shot of the whole desktop per
//! capture (a few hundred milliseconds; the desktop asks the person once
//! whether deskhand may take screenshots). The portal writes each shot to
//! a file; deskhand reads it and deletes it, so none is left behind.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use ashpd::desktop::screenshot::Screenshot;
use deskhand_backend::BackendError;

use crate::frames::Frame;
use crate::portal::Grant;

/// The file a `file://` URI names, its `%XX` escapes decoded.
pub(crate) fn file_path(uri: &str) -> Option<PathBuf> {
    let path = uri.strip_prefix("file://")?;
    let decoded = percent_encoding::percent_decode_str(path).collect::<Vec<u8>>();
    let path =
        PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(decoded));
    path.is_absolute().then_some(path)
}

/// A PNG (RGB or RGBA, 8 bits) as a BGRx frame.
pub(crate) fn frame_of_png(bytes: &[u8]) -> Result<Frame, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let mut buf = vec![0; reader.output_buffer_size().ok_or("a PNG too large")?];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => return Err(format!("a {other:?} PNG")),
    };
    let mut data = Vec::with_capacity(info.width as usize * info.height as usize * 4);
    for row in buf.chunks(info.line_size).take(info.height as usize) {
        for px in row.chunks_exact(channels).take(info.width as usize) {
            data.extend_from_slice(&[px[2], px[1], px[0], 0xff]);
        }
    }
    Ok(Frame {
        width: info.width,
        height: info.height,
        data,
        at: Instant::now(),
    })
}

/// One shot of the whole desktop, its file read and deleted.
pub(crate) async fn shoot() -> Result<Frame, ashpd::Error> {
    let shot = Screenshot::request()
        .interactive(false)
        .modal(false)
        .send()
        .await?
        .response()?;
    let uri = shot.uri().as_str();
    let path = file_path(uri).ok_or_else(|| {
        ashpd::Error::IO(std::io::Error::other(format!(
            "the Screenshot portal gave no file: {uri}"
        )))
    })?;
    tracing::debug!(path = %path.display(), "a portal screenshot");
    let bytes = tokio::fs::read(&path).await;
    // Deleted whether or not it reads: the shot is deskhand's, not the
    // person's.
    if let Err(e) = tokio::fs::remove_file(&path).await {
        tracing::warn!(error = %e, path = %path.display(), "a portal screenshot was not deleted");
    }
    frame_of_png(&bytes.map_err(ashpd::Error::IO)?)
        .map_err(|e| ashpd::Error::IO(std::io::Error::other(format!("the portal's PNG: {e}"))))
}

/// The permission store's table and id of the screenshot permission, and
/// the app id of an unsandboxed app such as deskhand.
const STORE: (&str, &str, &str) = ("screenshot", "screenshot", "");

/// Whether `permissions` (a `Lookup` of the permission store) say no for
/// deskhand.
pub(crate) fn says_no(permissions: &HashMap<String, Vec<String>>) -> bool {
    permissions
        .get(STORE.2)
        .and_then(|p| p.first())
        .is_some_and(|p| p == "no")
}

/// Whether the person said no to screenshots: the portal answers a denial
/// as any other failure, but the desktop keeps the answer in its
/// permission store.
pub(crate) async fn denied() -> bool {
    let looked = async {
        let conn = zbus::Connection::session().await?;
        let reply = conn
            .call_method(
                Some("org.freedesktop.impl.portal.PermissionStore"),
                "/org/freedesktop/impl/portal/PermissionStore",
                Some("org.freedesktop.impl.portal.PermissionStore"),
                "Lookup",
                &(STORE.0, STORE.1),
            )
            .await?;
        let (permissions, _data): (HashMap<String, Vec<String>>, zbus::zvariant::OwnedValue) =
            reply.body().deserialize()?;
        Ok::<_, zbus::Error>(permissions)
    };
    looked.await.is_ok_and(|p| says_no(&p))
}

/// Why a capture through the Screenshot portal failed, for the agent.
pub(crate) fn refused(grant: &Grant) -> BackendError {
    match grant {
        Grant::Denied => BackendError::Unsupported(
            "the person denied screenshots in the desktop's dialog (portal_screenshot_denied); they can allow them in the desktop's privacy settings".into(),
        ),
        Grant::Unavailable(why) | Grant::Failed(why) => {
            BackendError::Unsupported(format!("no screenshots: no ScreenCast portal, and the Screenshot portal failed: {why}"))
        }
        Grant::Pending | Grant::Granted => {
            BackendError::Failed("the Screenshot portal gave no picture".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_uri_is_its_decoded_path_and_nothing_else_is() {
        assert_eq!(
            file_path("file:///home/p/Pictures/Screenshot%20from%202026.png"),
            Some(PathBuf::from("/home/p/Pictures/Screenshot from 2026.png"))
        );
        assert_eq!(
            file_path("file:///tmp/%C3%B6.png"),
            Some(PathBuf::from("/tmp/ö.png"))
        );
        assert_eq!(file_path("https://example.com/a.png"), None);
        assert_eq!(file_path("file://relative.png"), None);
    }

    #[test]
    fn only_a_kept_no_for_unsandboxed_apps_is_a_denial() {
        let of =
            |app: &str, answer: &str| HashMap::from([(app.to_owned(), vec![answer.to_owned()])]);
        assert!(says_no(&of("", "no")));
        assert!(!says_no(&of("", "yes")));
        assert!(!says_no(&of("org.example.App", "no")));
        assert!(!says_no(&HashMap::new()));
    }

    #[test]
    fn a_png_becomes_bgrx_rows() {
        let mut bytes = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut bytes, 2, 1);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().expect("header");
            w.write_image_data(&[10, 20, 30, 200, 100, 0])
                .expect("pixels");
        }
        let f = frame_of_png(&bytes).expect("decodes");
        assert_eq!((f.width, f.height), (2, 1));
        assert_eq!(f.data, vec![30, 20, 10, 0xff, 0, 100, 200, 0xff]);
        assert!(frame_of_png(b"not a png").is_err());
    }
}
