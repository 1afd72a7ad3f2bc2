//! Lines from a peer on stdin (an MCP client, the host's control pipe),
//! read so that one bad line costs only that line: bytes that are not
//! UTF-8 and lines over the bound are reported, and reading goes on.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line kept: the daemon's bound on one message (16 MiB).
pub const MAX_LINE: usize = 16 << 20;

/// One line read, without its line end.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line of text.
    Text(String),
    /// A line that is not UTF-8 (its length in bytes).
    NotUtf8(usize),
    /// A line over the bound, skipped to its end.
    TooLong,
}

/// Reads the next line of at most `max` bytes (its line end aside); `None`
/// at the end of the input. A longer line is skipped without being kept.
pub async fn next<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if !read_any {
                return Ok(None);
            }
            break;
        }
        read_any = true;
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !too_long && line.len() + take > max.saturating_add(2) {
            too_long = true;
            line = Vec::new();
        }
        if !too_long {
            line.extend_from_slice(&available[..take]);
        }
        reader.consume(take);
        if newline.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    if line.len() > max {
        return Ok(Some(Line::TooLong));
    }
    let len = line.len();
    Ok(Some(match String::from_utf8(line) {
        Ok(text) => Line::Text(text),
        Err(_) => Line::NotUtf8(len),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bad_line_costs_only_that_line() {
        let mut input: &[u8] = b"{\"a\":1}\r\n\xff\xfe oops\n0123456789a\n0123456789\nlast";
        let mut got = Vec::new();
        while let Some(line) = next(&mut input, 10).await.expect("read") {
            got.push(line);
        }
        assert_eq!(
            got,
            [
                Line::Text("{\"a\":1}".into()),
                Line::NotUtf8(7),
                Line::TooLong,
                Line::Text("0123456789".into()),
                Line::Text("last".into()),
            ]
        );
    }
}
