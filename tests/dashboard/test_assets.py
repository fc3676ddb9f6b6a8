"""The page's files: every module is in the import map with the assets' stamp (so a cached old
module is never mixed with new ones), every relative import names a module that exists, and
the formatting helpers read numbers, durations and parameters as people write them."""

from __future__ import annotations

import json
import re

from hyperlab.server import create_app
from hyperlab.server._pages import STATIC
from tests.dashboard.conftest import Dash, Lab
from tests.server import SESSION_TOKEN, client_for

MODULES = sorted(STATIC.glob("js/*.js"))


def test_every_module_is_in_the_import_map_with_the_assets_stamp(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'runs.db'}", session_token=SESSION_TOKEN)
    with client_for(app) as client:
        html = client.get("/").text
        assert "{{" not in html
        imports = json.loads(re.search(r'<script type="importmap">(.+?)</script>', html, re.S)[1])
        stamp = re.search(r'/static/style\.css\?v=([\w.-]+)"', html)[1]
        assert stamp.startswith(app.version)
        expected = {f"/static/js/{m.name}": f"/static/js/{m.name}?v={stamp}" for m in MODULES}
        assert imports["imports"] == expected
        assert html.count('rel="modulepreload"') == len(MODULES)
        for module in MODULES:
            response = client.get(f"/static/js/{module.name}?v={stamp}")
            assert response.status_code == 200
            assert "immutable" in response.headers["cache-control"]


def test_every_relative_import_names_a_module_that_exists():
    names = {m.name for m in MODULES}
    for module in MODULES:
        for target in re.findall(r'from "\./([\w.-]+)"', module.read_text()):
            assert target in names, f"{module.name} imports a missing ./{target}"
        assert len(module.read_text().splitlines()) < 400, f"{module.name} is too long to read"


def test_numbers_durations_and_parameters_read_as_people_write_them(dash: Dash, lab: Lab):
    dash.page.goto(lab.page_url("#/"))
    shown = dash.page.evaluate(
        """async () => {
          const f = await import("/static/js/format.js");
          return {
            nums: [f.num(0.000123456), f.num(123456.7), f.num(12.3456), f.num(100000),
                   f.num(0.5), f.num(-2.5e-7), f.num(null), f.num(1e21)],
            durations: [f.duration(0.45), f.duration(7.25), f.duration(72), f.duration(7300),
                        f.duration(200000), f.duration(null)],
            relative: [f.relative(1000, 1002), f.relative(1000, 1090), f.relative(1000, 8200)],
            params: [f.param({_name: "conv", kernel: 3}), f.param(null), f.param("adam"),
                     f.param(0.00012345)],
          };
        }"""
    )
    assert shown["nums"] == [
        "1.23e-4",
        "123,457",
        "12.35",
        "100,000",
        "0.5",
        "-2.5e-7",
        "\u2013",
        "1e+21",
    ]
    assert shown["durations"] == ["450ms", "7.3s", "1m 12s", "2h 01m", "2d 7h", "\u2013"]
    assert shown["relative"] == ["just now", "1m ago", "2h ago"]
    assert shown["params"] == ["conv(kernel=3)", "null", "adam", "1.23e-4"]
