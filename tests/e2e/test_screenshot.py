"""SCREENSHOT_REQUEST: PNG and JPEG, full screen and region, real pixels."""

import subprocess

import pytest

from imaging import decode_png, jpeg_info
from xhelpers import XTerm, require, run

RED = (255, 0, 0)
ROOT = (0x20, 0x40, 0x60)


@pytest.fixture
def red_window(display, apps):
    """A solid red xterm (no text below its first row) over a #204060 root."""
    require("xsetroot")
    run(display, "xsetroot", "-solid", "#204060")
    term = XTerm(display, cols=40, rows=12, pos="+300+200", bg="#ff0000")
    apps.append(term)
    return term


def reference_capture(display: str):
    """The same screen captured independently with ImageMagick's import."""
    require("import")
    png = subprocess.run(["import", "-display", display, "-window", "root", "png:-"],
                         capture_output=True, check=True, timeout=20).stdout
    return decode_png(png)


def test_full_png_matches_display_and_pixels(client, display, red_window):
    # `import` sees the takeover frame; deskhand leaves it out (test_takeover
    # checks that): compare without a takeover.
    client.take_over(False)
    shot = client.screenshot(format="png")
    assert shot["mime_type"] == "image/png", shot["mime_type"]
    img = decode_png(shot["image"])
    assert (img.width, img.height) == (1280, 800)
    assert (shot["width"], shot["height"]) == (1280, 800)
    r = red_window.rect()
    inside = (r.x + r.w // 2, r.y + r.h - 20)
    assert img.pixel(*inside) == RED, f"pixel {inside} inside the red window"
    assert img.pixel(1275, 795) == ROOT, "root background pixel"
    ref = reference_capture(display)
    for pt in (inside, (1275, 795), (r.x + 1, r.y + 1), (r.x - 1, r.y - 1)):
        assert img.pixel(*pt) == ref.pixel(*pt), f"deskhand and `import` disagree at {pt}"


def test_default_format_is_png(client, red_window):
    shot = client.screenshot()
    assert shot["mime_type"] == "image/png"
    assert decode_png(shot["image"]).width == 1280


def test_region_png_is_cropped_in_global_coordinates(client, red_window):
    r = red_window.rect()
    x1, y1 = r.x - 50, r.y - 40
    region = [x1, y1, x1 + 400, y1 + 300]
    shot = client.screenshot(format="png", region=region)
    img = decode_png(shot["image"])
    assert (img.width, img.height) == (400, 300)
    assert (shot["width"], shot["height"]) == (400, 300)
    assert shot["region"] == region
    assert shot["meta"]["origin"] == [x1, y1]
    # the window's top-left corner is at (50, 40) in the crop
    assert img.pixel(50 + 10, 40 + r.h - 20) == RED
    assert img.pixel(50 - 5, 40 - 5) != RED, "pixel left of/above the window is red"


def test_jpeg_is_a_jpeg_and_quality_changes_size(client, red_window):
    hi = client.screenshot(format="jpeg", quality=95)
    lo = client.screenshot(format="jpeg", quality=20)
    for shot in (hi, lo):
        assert shot["mime_type"] == "image/jpeg"
        assert jpeg_info(shot["image"]) == (1280, 800)
        assert (shot["width"], shot["height"]) == (1280, 800)
    assert len(lo["image"]) < len(hi["image"]), (len(lo["image"]), len(hi["image"]))


def test_jpeg_region_size(client, red_window):
    shot = client.screenshot(format="jpeg", region=[10, 20, 330, 260])
    assert jpeg_info(shot["image"]) == (320, 240)


def test_screenshot_reports_its_monitor(client):
    shot = client.screenshot()
    assert shot["monitor"] == 0
    assert shot["meta"]["display_id"] == 0
    assert shot["display_scale"] == 1.0
    assert shot["logical_size"] == [1280, 800]
    assert shot["meta"]["origin"] == [0, 0]
