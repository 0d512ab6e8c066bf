#!/usr/bin/env python3
"""Render a terminal capture (tmux capture-pane -e -p) to a PNG, cell by cell.

usage: ansi_to_png.py CAPTURE.ansi COLUMNS ROWS OUT.png
Needs: pip install pyte pillow; fonts-dejavu-core and fonts-wqy-microhei (Debian) for CJK.
"""
import sys

import pyte
from PIL import Image, ImageDraw, ImageFont

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
MONO_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
CJK = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
SIZE = 15
CELL_W, CELL_H = 9, 19
DEFAULT_FG, DEFAULT_BG = (220, 220, 220), (24, 24, 28)

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


def main():
    capture, cols, rows, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    with open(capture, encoding="utf-8", errors="replace") as f:
        # capture-pane separates rows with newlines; the emulator needs carriage returns too.
        stream.feed(f.read().replace("\n", "\r\n"))
    fonts = {
        False: ImageFont.truetype(MONO, SIZE),
        True: ImageFont.truetype(MONO_BOLD, SIZE),
    }
    cjk = ImageFont.truetype(CJK, SIZE)
    img = Image.new("RGB", (cols * CELL_W, rows * CELL_H), DEFAULT_BG)
    draw = ImageDraw.Draw(img)
    for y in range(rows):
        line = screen.buffer[y]
        for x in range(cols):
            ch = line[x]
            fg, bg = colour(ch.fg, DEFAULT_FG), colour(ch.bg, DEFAULT_BG)
            if ch.reverse:
                fg, bg = bg, fg
            wide = x + 1 < cols and line[x + 1].data == ""
            width = CELL_W * (2 if wide else 1)
            draw.rectangle([x * CELL_W, y * CELL_H, x * CELL_W + width - 1, (y + 1) * CELL_H - 1], fill=bg)
            if ch.data and ch.data != " ":
                font = cjk if (wide or ord(ch.data[0]) > 0x2E7F) else fonts[bool(ch.bold)]
                draw.text((x * CELL_W, y * CELL_H + 1), ch.data, font=font, fill=fg)
            if ch.underscore:
                draw.line([x * CELL_W, (y + 1) * CELL_H - 2, x * CELL_W + width, (y + 1) * CELL_H - 2], fill=fg)
    img.save(out)


if __name__ == "__main__":
    main()
