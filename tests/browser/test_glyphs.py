"""Screenshots with real glyphs: a Japanese answer and the emoji on grace's buttons render
with fonts that have them (scripts/test.sh installs fonts-noto-cjk and
fonts-noto-color-emoji), not as the fallback box ("tofu").

The check draws each character with the answer's own font on a canvas inside the page —
the same font fallback the page uses — and compares it with the drawing of a character no
font has (U+FFFF): boxes all look alike, real glyphs each look different. A second test
shows the check sees the boxes when Chromium is given no CJK or emoji font.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, async_playwright, expect

from .conftest import ARTIFACTS, CHROMIUM_ARGS, FEEDBACK_UP, GraceDev, SimPage, require_chromium

JAPANESE_Q = "経費精算の締め切りはいつですか？"

GLYPHS_JS = """
(root) => {
  const cjk = /[\\u3040-\\u30ff\\u3400-\\u9fff]/;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let node = null;
  while ((node = walker.nextNode()) && !cjk.test(node.textContent)) {}
  if (!node) return null;
  const style = getComputedStyle(node.parentElement);
  const font = `${style.fontStyle} ${style.fontWeight} 40px ${style.fontFamily}`;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 64;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const draw = (text) => {
    ctx.clearRect(0, 0, 64, 64);
    ctx.font = font;
    ctx.fillStyle = "#000";
    ctx.fillText(text, 8, 48);
    const data = ctx.getImageData(0, 0, 64, 64).data;
    let ink = 0, colour = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 0) ink++;
      const hi = Math.max(data[i], data[i + 1], data[i + 2]);
      const lo = Math.min(data[i], data[i + 1], data[i + 2]);
      if (data[i + 3] > 128 && hi - lo > 60) colour++;
    }
    return { key: Array.from(data.filter((_, i) => i % 4 === 3)).join(","), ink, colour };
  };
  const tofu = draw("\\uffff");
  const chars = [...new Set([...node.textContent].filter((c) => cjk.test(c)))].slice(0, 16);
  const drawn = chars.map(draw);
  const emoji = draw("\\u{1F44D}");
  return {
    font,
    chars: chars.join(""),
    distinct: new Set(drawn.map((d) => d.key)).size,
    like_tofu: drawn.filter((d) => d.key === tofu.key).length,
    inkless: drawn.filter((d) => d.ink === 0).length,
    emoji_colour: emoji.colour,
  };
}
"""


def assert_real_glyphs(report: dict[str, Any] | None) -> None:
    assert report is not None, "no Japanese text found"
    chars = report["chars"]
    assert len(chars) >= 8, report
    assert report["like_tofu"] == 0, f"drawn as the fallback box: {report}"
    assert report["inkless"] == 0, f"drawn as nothing: {report}"
    assert report["distinct"] == len(chars), f"characters look alike (boxes?): {report}"
    assert report["emoji_colour"] > 100, f"👍 is not a colour emoji: {report}"


async def test_a_japanese_answer_renders_with_real_glyphs(
    grace_dev: GraceDev, sim: SimPage
) -> None:
    await sim.open(grace_dev.url)
    await sim.ask(f"@grace {JAPANESE_Q}")
    await expect(sim.thread).to_be_visible()
    answer = await sim.proceed_until_answered()
    await expect(answer).to_contain_text("翌月5日")
    await expect(sim.button(FEEDBACK_UP, answer)).to_contain_text("👍")
    shot = await sim.shot("japanese-answer")
    assert shot.stat().st_size > 10_000
    assert_real_glyphs(await answer.evaluate(GLYPHS_JS))


def dejavu_only(tmp_path: Path) -> Path:
    """A fontconfig file that knows only DejaVu (a dependency of Debian's chromium)."""
    dejavu = Path("/usr/share/fonts/truetype/dejavu")
    assert dejavu.is_dir(), "fonts-dejavu-core is missing"
    config = tmp_path / "fonts.conf"
    config.write_text(
        f"<?xml version='1.0'?><fontconfig><dir>{dejavu}</dir>"
        f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>",
        encoding="utf-8",
    )
    return config


async def test_the_check_sees_boxes_when_the_fonts_are_missing(tmp_path: Path) -> None:
    """Chromium with only DejaVu (no CJK, no colour emoji): the check must fail."""
    env = {**os.environ, "FONTCONFIG_FILE": str(dejavu_only(tmp_path))}
    async with async_playwright() as playwright:
        browser: Browser = await playwright.chromium.launch(
            executable_path=str(require_chromium()), args=CHROMIUM_ARGS, env=env
        )
        try:
            page = await browser.new_page()
            await page.set_content(
                "<p style='font: 16px sans-serif'>経費精算の締め切りは、経費が発生した月の"
                "翌月5日です。 👍</p>"
            )
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "glyphs-without-fonts.png"))
            report = await page.locator("p").evaluate(GLYPHS_JS)
        finally:
            await browser.close()
    assert report is not None
    assert report["like_tofu"] == len(report["chars"]) or report["distinct"] <= 2, report
    assert report["emoji_colour"] <= 100, report
