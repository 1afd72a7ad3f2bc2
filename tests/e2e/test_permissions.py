"""PERMISSIONS_CHECK_REQUEST on X11: no TCC here, probes where deskhand can
probe, unknown otherwise; nothing is prompted."""


def test_x11_permissions(client):
    p = client.call("PERMISSIONS_CHECK_REQUEST",
                    {"permissions": ["screen_recording", "accessibility", "input_monitoring",
                                     "input_injection", "screen_capture", "display",
                                     "camera"]},
                    expect="PERMISSIONS_CHECK_RESPONSE")["permissions"]
    assert p == {
        "screen_recording": "not_applicable",
        "accessibility": "not_applicable",
        "input_monitoring": "not_applicable",
        "input_injection": "granted",
        "screen_capture": "granted",
        "display": "granted",
        "camera": "unknown",
    }, p


def test_without_names_every_known_permission_is_reported(client):
    p = client.call("PERMISSIONS_CHECK_REQUEST", {}, expect="PERMISSIONS_CHECK_RESPONSE")
    assert {"screen_recording", "input_injection", "display"} <= set(p["permissions"])
    assert "permissions" in client.hello["payload"]["computer_use_features_coarse"]
