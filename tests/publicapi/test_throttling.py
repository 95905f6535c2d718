"""The client's address: X-Forwarded-For behind NUM_PROXIES proxies, only ever an address."""

import ipaddress

import pytest
from django.test import RequestFactory
from hypothesis import given
from hypothesis import strategies as st

from publicapi.throttling import canonical_address, client_ip

PEER = "10.0.0.1"


def address_of(forwarded: str | None, *, num_proxies: int, settings) -> str:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": num_proxies}
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return client_ip(RequestFactory().get("/", REMOTE_ADDR=PEER, **headers))


@pytest.mark.parametrize(
    ("forwarded", "num_proxies", "expected"),
    [
        (None, 1, PEER),
        ("203.0.113.7", 0, PEER),  # no proxies: the header is anyone's to write
        ("203.0.113.7", 1, "203.0.113.7"),
        ("198.51.100.9, 203.0.113.7", 1, "203.0.113.7"),  # what our proxy appended
        ("198.51.100.9, 203.0.113.7, 10.0.0.5", 2, "203.0.113.7"),
        ("203.0.113.7", 3, "203.0.113.7"),  # fewer entries than proxies: the first
        (" 2001:DB8::1 ", 1, "2001:db8::1"),
        ("::ffff:203.0.113.7", 1, "203.0.113.7"),
        ("203.0.113.7:51234", 1, "203.0.113.7"),
        ("[2001:db8::1]:443", 1, "2001:db8::1"),
        # not an address: the peer, whatever the client wrote
        ("1.2.3.4, evil", 1, PEER),
        ("evil", 1, PEER),
        ("", 1, PEER),
        ("1.2.3.4,", 1, PEER),
        ("999.1.1.1", 1, PEER),
        ("fe80::1%eth0", 1, PEER),
        ("203.0.113.7/24", 1, PEER),
        ("unknown", 1, PEER),
    ],
)
def test_the_client_is_the_address_our_outermost_proxy_wrote(
    forwarded, num_proxies, expected, settings
):
    assert address_of(forwarded, num_proxies=num_proxies, settings=settings) == expected


@given(forwarded=st.text(max_size=60), num_proxies=st.integers(min_value=0, max_value=3))
def test_whatever_the_header_holds_the_client_is_an_address(forwarded, num_proxies, settings):
    address = address_of(forwarded, num_proxies=num_proxies, settings=settings)

    assert str(ipaddress.ip_address(address)) == address


def test_a_canonical_address_is_one_form_per_address():
    assert canonical_address("2001:0db8:0000::0001") == "2001:db8::1"
    assert canonical_address("::ffff:c000:0201") == "192.0.2.1"
    assert canonical_address("192.0.2.1") == "192.0.2.1"
    assert canonical_address("192.0.2.1 trailing") is None
