#!/usr/bin/env python3
"""Render a terminal capture (tmux capture-pane -e -p) to a PNG, cell by cell.

usage: ansi_to_png.py CAPTURE.ansi COLUMNS ROWS OUT.png [dark|light]
The last argument picks the terminal's own colours (for cells that use the default): a dark
terminal (the default) or a light one, as a light theme expects.
Needs: pip install pyte pillow; Debian fonts-dejavu-core and fonts-wqy-microhei (CJK), and
optionally fonts-noto-color-emoji or fonts-symbola (emoji). Glyphs a font lacks fall through to
the next font of the chain, so symbols, CJK and emoji all show.
"""
import os
import sys

import pyte
from PIL import Image, ImageDraw, ImageFont

DEJAVU = "/usr/share/fonts/truetype/dejavu/"
MONO = DEJAVU + "DejaVuSansMono.ttf"
MONO_BOLD = DEJAVU + "DejaVuSansMono-Bold.ttf"
MONO_ITALIC = DEJAVU + "DejaVuSansMono-Oblique.ttf"
MONO_BOLD_ITALIC = DEJAVU + "DejaVuSansMono-BoldOblique.ttf"
SANS = DEJAVU + "DejaVuSans.ttf"
CJK = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
SYMBOLA = "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"
EMOJI = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"
EMOJI_SIZE = 109  # the only size the colour bitmap font has
SIZE = 15
CELL_W, CELL_H = 9, 19
TERMINAL_COLOURS = {"dark": ((220, 220, 220), (24, 24, 28)), "light": ((36, 41, 46), (255, 255, 255))}
DEFAULT_FG, DEFAULT_BG = TERMINAL_COLOURS["dark"]

NAMED = {
    "black": (0, 0, 0), "red": (205, 49, 49), "green": (13, 188, 121), "brown": (229, 229, 16),
    "yellow": (229, 229, 16), "blue": (36, 114, 200), "magenta": (188, 63, 188), "cyan": (17, 168, 205),
    "white": (229, 229, 229), "brightblack": (102, 102, 102), "brightred": (241, 76, 76),
    "brightgreen": (35, 209, 139), "brightyellow": (245, 245, 67), "brightblue": (59, 142, 234),
    "brightmagenta": (214, 112, 214), "brightcyan": (41, 184, 219), "brightwhite": (255, 255, 255),
}


def colour(value, default):
    if value == "default":
        return default
    if value in NAMED:
        return NAMED[value]
    try:
        return tuple(int(value[i:i + 2], 16) for i in (0, 2, 4))
    except (ValueError, IndexError):
        return default


# Box-drawing characters as (left, right, up, down) arm weights (1 light, 2 heavy), drawn as lines
# so borders join across cells (font glyphs leave gaps at this cell height).
BOX = {}
for chars, arms in (
    ("─━", ((1, 1, 0, 0), (2, 2, 0, 0))), ("│┃", ((0, 0, 1, 1), (0, 0, 2, 2))),
    ("┌┏╭", ((0, 1, 0, 1), (0, 2, 0, 2), (0, 1, 0, 1))), ("┐┓╮", ((1, 0, 0, 1), (2, 0, 0, 2), (1, 0, 0, 1))),
    ("└┗╰", ((0, 1, 1, 0), (0, 2, 2, 0), (0, 1, 1, 0))), ("┘┛╯", ((1, 0, 1, 0), (2, 0, 2, 0), (1, 0, 1, 0))),
    ("├┣", ((0, 1, 1, 1), (0, 2, 2, 2))), ("┤┫", ((1, 0, 1, 1), (2, 0, 2, 2))),
    ("┬┳", ((1, 1, 0, 1), (2, 2, 0, 2))), ("┴┻", ((1, 1, 1, 0), (2, 2, 2, 0))),
    ("┼╋", ((1, 1, 1, 1), (2, 2, 2, 2))), ("╴╶╵╷", ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1))),
):
    BOX.update(zip(chars, arms))


def draw_box(draw, ch, x, y, fg):
    left, right, up, down = BOX[ch]
    cx, cy = x + CELL_W // 2, y + CELL_H // 2
    for weight, box in (
        (left, [x, cy, cx, cy]), (right, [cx, cy, x + CELL_W - 1, cy]),
        (up, [cx, y, cx, cy]), (down, [cx, cy, cx, y + CELL_H - 1]),
    ):
        if weight:
            # Heavy lines are 2 px wide, light ones 1 px.
            x0, y0, x1, y1 = box
            draw.rectangle([x0, y0, x1 + (weight - 1) * (x0 == x1), y1 + (weight - 1) * (y0 == y1)], fill=fg)


def load(path, size=SIZE):
    return ImageFont.truetype(path, size) if os.path.exists(path) else None


class Fonts:
    """The font chain: the first font that has a glyph draws it."""

    def __init__(self):
        self.mono = {
            (False, False): load(MONO),
            (True, False): load(MONO_BOLD),
            (False, True): load(MONO_ITALIC) or load(MONO),
            (True, True): load(MONO_BOLD_ITALIC) or load(MONO_BOLD),
        }
        self.fallbacks = [f for f in (load(SANS), load(CJK), load(SYMBOLA)) if f]
        self.emoji = load(EMOJI, EMOJI_SIZE)
        self.cache = {}

    @staticmethod
    def _render(font, ch):
        img = Image.new("L", (CELL_W * 3, CELL_H * 2), 0)
        ImageDraw.Draw(img).text((0, 0), ch, font=font, fill=255)
        return img.tobytes()

    def has(self, font, ch):
        """Whether `font` has a glyph for `ch`: it draws something other than its .notdef box."""
        key = (id(font), ch)
        if key not in self.cache:
            missing_key = (id(font), None)
            if missing_key not in self.cache:
                self.cache[missing_key] = self._render(font, "\U0010fffd")
            drawn = self._render(font, ch)
            self.cache[key] = any(drawn) and drawn != self.cache[missing_key]
        return self.cache[key]

    def pick(self, ch, bold, italic):
        """A text font for `ch`, or None when only the emoji font has it."""
        # Pictographs in colour when the colour font is there (Symbola has them only in black).
        if ord(ch) >= 0x1F000 and self.emoji is not None:
            return None
        mono = self.mono[(bold, italic)]
        if self.has(mono, ch):
            return mono
        for f in self.fallbacks:
            if self.has(f, ch):
                return f
        return None


def draw_emoji(img, fonts, ch, x, y, width):
    if fonts.emoji is None:
        return False
    glyph = Image.new("RGBA", (EMOJI_SIZE * 2, EMOJI_SIZE * 2), (0, 0, 0, 0))
    ImageDraw.Draw(glyph).text((0, 0), ch, font=fonts.emoji, embedded_color=True)
    box = glyph.getbbox()
    if box is None:
        return False
    glyph = glyph.crop(box)
    side = min(width, CELL_H) - 2
    scale = side / max(glyph.width, glyph.height)
    glyph = glyph.resize((max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale))), Image.LANCZOS)
    img.paste(glyph, (x + (width - glyph.width) // 2, y + (CELL_H - glyph.height) // 2), glyph)
    return True


def main():
    global DEFAULT_FG, DEFAULT_BG
    capture, cols, rows, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    DEFAULT_FG, DEFAULT_BG = TERMINAL_COLOURS[sys.argv[5] if len(sys.argv) > 5 else "dark"]
    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    with open(capture, encoding="utf-8", errors="replace") as f:
        text = f.read()
    # capture-pane ends every row with a newline; the last one would scroll the screen up a row.
    if text.endswith("\n"):
        text = text[:-1]
    # Rows are separated by newlines; the emulator needs carriage returns too.
    stream.feed(text.replace("\n", "\r\n"))
    fonts = Fonts()
    img = Image.new("RGB", (cols * CELL_W, rows * CELL_H), DEFAULT_BG)
    draw = ImageDraw.Draw(img)
    for y in range(rows):
        line = screen.buffer[y]
        for x in range(cols):
            ch = line[x]
            # The right half of a wide character: drawn with the character itself.
            if ch.data == "" and x > 0:
                continue
            fg, bg = colour(ch.fg, DEFAULT_FG), colour(ch.bg, DEFAULT_BG)
            if ch.reverse:
                fg, bg = bg, fg
            wide = x + 1 < cols and line[x + 1].data == ""
            width = CELL_W * (2 if wide else 1)
            px, py = x * CELL_W, y * CELL_H
            draw.rectangle([px, py, px + width - 1, py + CELL_H - 1], fill=bg)
            if ch.data in BOX:
                draw_box(draw, ch.data, px, py, fg)
            elif ch.data and ch.data != " ":
                font = fonts.pick(ch.data[0], bool(ch.bold), bool(ch.italics))
                if font is None:
                    if not draw_emoji(img, fonts, ch.data, px, py, width):
                        draw.rectangle([px + 1, py + 3, px + width - 2, py + CELL_H - 4], outline=fg)
                else:
                    draw.text((px, py + 1), ch.data, font=font, fill=fg)
            if ch.underscore:
                draw.line([px, py + CELL_H - 2, px + width - 1, py + CELL_H - 2], fill=fg)
            if ch.strikethrough:
                draw.line([px, py + CELL_H // 2, px + width - 1, py + CELL_H // 2], fill=fg)
    img.save(out)


if __name__ == "__main__":
    main()
