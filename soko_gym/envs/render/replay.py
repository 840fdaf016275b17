"""Replays of LURD solutions: an animated GIF, an MP4 video, or one self-contained HTML viewer.

Every solution is checked with THE verifier first (``soko_gym.levels.verify``), so a replay
never shows an illegal step. Frames are drawn with the renderer's tiles
(``soko_gym.levels.picture``); a replay of ``n`` steps has ``n + 1`` frames, the start first and
the solved position last. Pillow (the ``data`` extra) writes GIFs, imageio-ffmpeg (the ``video``
extra) writes MP4s; both are imported only when used. The HTML file embeds the tile atlas once
as a PNG data URI and replays the LURD strings on canvases in JavaScript: it needs no server
and no network, and shows several solutions side by side.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from soko_gym.levels import Level, verify
from soko_gym.levels.picture import (
    N_TILES,
    TILE_BOX,
    TILE_BOX_ON_GOAL,
    TILE_FLOOR,
    TILE_GOAL,
    TILE_PLAYER,
    TILE_PLAYER_ON_GOAL,
    check_tile_size,
    level_tile_ids,
    png_bytes,
    tile_atlas,
)

FORMATS = {".gif": "gif", ".mp4": "mp4", ".html": "html", ".htm": "html"}
MAX_FPS = 100
_STEP = {"u": (-1, 0), "d": (1, 0), "l": (0, -1), "r": (0, 1)}


@dataclass(frozen=True)
class Replay:
    """A verified solution of one level, ready to draw.

    Attributes:
        level: the level.
        lurd: the solution (lowercase moves, uppercase pushes); it replays legally and solves.
        label: what a viewer shows above it (level title, planner...).
        moves: number of steps (len of ``lurd``).
        pushes: number of pushes.
    """

    level: Level
    lurd: str
    label: str
    moves: int
    pushes: int


def make_replay(level: Level, lurd: str, label: str = "") -> Replay:
    """Verify ``lurd`` on ``level`` and wrap it as a Replay.

    Raises:
        ValueError: naming the level (``label`` or its title) and the first bad step (1-based),
            or saying that boxes remain off goals at the end.
    """
    label = label or level.title or "the level"
    result = verify(level, lurd)
    if not result.ok:
        index = result.index if result.index is not None else len(lurd)
        if index >= len(lurd):
            raise ValueError(
                f"{label}: the solution does not solve the level: after all {len(lurd)} steps "
                f"({result.reason})"
            )
        raise ValueError(
            f"{label}: bad solution at step {index + 1} of {len(lurd)} "
            f"({lurd[index]!r}): {result.reason}"
        )
    return Replay(level, lurd, label, result.moves, result.pushes)


def _static_tiles(level: Level) -> np.ndarray:
    """The level's tiles without boxes and player: outside, wall, floor and goal only."""
    ids = level_tile_ids(level)
    ids[np.isin(ids, (TILE_BOX, TILE_PLAYER))] = TILE_FLOOR
    ids[np.isin(ids, (TILE_BOX_ON_GOAL, TILE_PLAYER_ON_GOAL))] = TILE_GOAL
    return ids


def frame_tile_ids(replay: Replay) -> np.ndarray:
    """Tile ids of every frame of a replay: uint8[moves + 1, height, width], start first."""
    base = _static_tiles(replay.level)
    goal = base == TILE_GOAL
    frames = np.empty((replay.moves + 1, *base.shape), dtype=np.uint8)
    frame = level_tile_ids(replay.level)
    frames[0] = frame
    r, c = replay.level.player
    for i, ch in enumerate(replay.lurd, 1):
        dr, dc = _STEP[ch.lower()]
        frame[r, c] = TILE_GOAL if goal[r, c] else TILE_FLOOR
        r, c = r + dr, c + dc
        if ch.isupper():
            frame[r + dr, c + dc] = TILE_BOX_ON_GOAL if goal[r + dr, c + dc] else TILE_BOX
        frame[r, c] = TILE_PLAYER_ON_GOAL if goal[r, c] else TILE_PLAYER
        frames[i] = frame
    return frames


def _palette_atlas(tile_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The atlas as palette indices: (uint8[N_TILES, t, t] indices, uint8[n_colours, 3])."""
    atlas = tile_atlas(tile_size)
    colours, inverse = np.unique(atlas.reshape(-1, 3), axis=0, return_inverse=True)
    if len(colours) > 256:  # never for tiles of 1..64 px (67 colours at most): frames stay exact
        raise ValueError(f"tile_size {tile_size} draws {len(colours)} colours, more than a GIF has")
    return inverse.reshape(atlas.shape[:3]).astype(np.uint8), colours.astype(np.uint8)


def _take_tiles(atlas: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """uint8[N, H, W] tile ids -> pictures from ``atlas`` (uint8[N_TILES, t, t, ...])."""
    n, h, w = ids.shape
    t = atlas.shape[1]
    depth = int(np.prod(atlas.shape[3:], dtype=np.int64))
    rows = atlas.reshape(N_TILES * t, t * depth)
    index = (
        ids.astype(np.intp)[:, :, None, :] * t + np.arange(t, dtype=np.intp)[None, None, :, None]
    )
    return np.take(rows, index, axis=0).reshape(n, h * t, w * t, *atlas.shape[3:])


def replay_frames(replay: Replay, tile_size: int = 16) -> np.ndarray:
    """RGB frames of a replay: uint8[moves + 1, height * tile, width * tile, 3]."""
    check_tile_size(tile_size)
    return _take_tiles(tile_atlas(int(tile_size)), frame_tile_ids(replay))


def _check_fps(fps: int) -> None:
    if isinstance(fps, bool) or not isinstance(fps, int) or not 1 <= fps <= MAX_FPS:
        raise ValueError(f"fps must be an int in 1..{MAX_FPS}, got {fps!r}")


def write_gif(replay: Replay, path: str | Path, *, fps: int = 8, tile_size: int = 16) -> int:
    """Write a replay as an animated GIF (one frame per step plus the start; loops forever).

    The last frame is held one extra second. Returns the number of frames.

    Raises:
        ImportError: naming the ``data`` extra when Pillow is missing.
        ValueError: on a bad ``fps`` or ``tile_size``.
    """
    _check_fps(fps)
    check_tile_size(tile_size)
    try:
        from PIL import Image
    except ImportError as err:
        raise ImportError("writing a GIF needs Pillow: pip install 'soko-gym[data]'") from err
    index_atlas, colours = _palette_atlas(int(tile_size))
    frames = _take_tiles(index_atlas, frame_tile_ids(replay))
    palette = colours.ravel().tolist()
    images = []
    for frame in frames:
        image = Image.fromarray(frame)  # 2-D uint8: mode "L", then "P"
        image.putpalette(palette)
        images.append(image)
    step_ms = max(20, round(1000 / fps / 10) * 10)  # GIF delays are in 1/100 s
    durations = [step_ms] * len(images)
    durations[-1] += 1000
    images[0].save(
        path,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=durations,
        loop=0,
        optimize=False,
    )
    return len(images)


def write_mp4(replay: Replay, path: str | Path, *, fps: int = 8, tile_size: int = 16) -> int:
    """Write a replay as an H.264 MP4 (yuv420p; odd sizes padded with the outside colour).

    The last frame is repeated for one extra second. Returns the number of distinct frames.

    Raises:
        ImportError: naming the ``video`` extra when imageio-ffmpeg is missing.
        ValueError: on a bad ``fps`` or ``tile_size``.
    """
    _check_fps(fps)
    check_tile_size(tile_size)
    try:
        import imageio_ffmpeg
    except ImportError as err:
        raise ImportError(
            "writing an MP4 needs imageio-ffmpeg: pip install 'soko-gym[video]'"
        ) from err
    atlas = tile_atlas(int(tile_size))
    ids = frame_tile_ids(replay)
    n, rows, cols = ids.shape
    h, w = rows * tile_size, cols * tile_size
    canvas = np.empty((h + h % 2, w + w % 2, 3), dtype=np.uint8)  # yuv420p needs even sides
    canvas[:] = atlas[0, 0, 0]  # the outside colour
    writer = imageio_ffmpeg.write_frames(
        str(path),
        (canvas.shape[1], canvas.shape[0]),
        fps=fps,
        codec="libx264",
        macro_block_size=2,
        ffmpeg_log_level="error",
    )
    writer.send(None)  # start ffmpeg
    try:
        for i in range(n):  # one frame at a time: long replays at large tiles stay small
            canvas[:h, :w] = _take_tiles(atlas, ids[i : i + 1])[0]
            writer.send(canvas.tobytes())
        for _ in range(fps):
            writer.send(canvas.tobytes())
    finally:
        writer.close()
    return n


# -- the HTML viewer ---------------------------------------------------------------------------


def html_data(replays: Sequence[Replay], *, fps: int = 8, tile_size: int = 16) -> dict:
    """What the HTML viewer embeds: the atlas (PNG data URI) and each replay's board and LURD."""
    check_tile_size(tile_size)
    _check_fps(fps)
    atlas = tile_atlas(int(tile_size))
    strip = np.ascontiguousarray(atlas.reshape(N_TILES * tile_size, tile_size, 3))
    uri = "data:image/png;base64," + base64.b64encode(png_bytes(strip)).decode("ascii")
    out = []
    for replay in replays:
        level = replay.level
        base = _static_tiles(level)
        w = level.width
        r, c = level.player
        out.append(
            {
                "label": replay.label,
                "width": w,
                "height": level.height,
                "tiles": "".join(str(int(t)) for t in base.ravel()),
                "boxes": [br * w + bc for br, bc in level.boxes],
                "player": r * w + c,
                "lurd": replay.lurd,
                "moves": replay.moves,
                "pushes": replay.pushes,
            }
        )
    return {"tile": int(tile_size), "fps": fps, "atlas": uri, "replays": out}


def replay_html(replays: Sequence[Replay], *, fps: int = 8, tile_size: int = 16) -> str:
    """One self-contained HTML page replaying ``replays`` side by side (see module docstring).

    Query parameters: ``autoplay=1`` starts playing, ``speed=N`` (steps per second) or
    ``speed=max`` (jump to the end), ``step=K`` opens at step K. ``window.sokoReplay`` offers
    ``play()``, ``pause()``, ``seek(k)``, ``end()`` and ``state()`` to scripts.
    """
    if not replays:
        raise ValueError("replays must hold at least one solution")
    data = json.dumps(html_data(replays, fps=fps, tile_size=tile_size), separators=(",", ":"))
    data = data.replace("</", "<\\/")  # nothing in the JSON can close the script element
    return _HTML.replace("/*DATA*/", data)


def write_html(
    replays: Sequence[Replay], path: str | Path, *, fps: int = 8, tile_size: int = 16
) -> int:
    """Write :func:`replay_html` to ``path``; returns its size in bytes."""
    body = replay_html(replays, fps=fps, tile_size=tile_size).encode("utf-8")
    Path(path).write_bytes(body)
    return len(body)


def output_format(path: str | Path) -> str:
    """The format named by the file name's suffix: "gif", "mp4" or "html".

    Raises:
        ValueError: naming ``--out`` for any other suffix.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"--out must end in .gif, .mp4 or .html, got {str(path)!r}")
    return FORMATS[suffix]


def write_replays(
    replays: Sequence[Replay], path: str | Path, *, fps: int = 8, tile_size: int = 16
) -> str:
    """Write ``replays`` in the format named by ``path``'s suffix; returns that format.

    A GIF or MP4 shows one solution; HTML shows any number side by side.

    Raises:
        ValueError: on an unknown suffix, or several replays for a GIF or MP4.
    """
    kind = output_format(path)
    if not replays:
        raise ValueError("no solution to render")
    if kind == "html":
        write_html(replays, path, fps=fps, tile_size=tile_size)
        return kind
    if len(replays) != 1:
        raise ValueError(
            f"--out {Path(path).name} shows one solution, got {len(replays)}: select one level "
            "(e.g. SOURCE:3) or write .html to see them side by side"
        )
    writer = write_gif if kind == "gif" else write_mp4
    writer(replays[0], path, fps=fps, tile_size=tile_size)
    return kind


_HTML = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>soko replay</title>
<style>
body{margin:0;padding:12px;background:#1e2029;color:#e6e6e6;font:14px system-ui,sans-serif}
#bar{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:12px}
button,select{background:#343846;color:#e6e6e6;border:1px solid #555a6b;border-radius:4px;
padding:4px 10px;font:inherit;cursor:pointer}
#pos{width:220px}
#panels{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.panel{background:#272a35;padding:8px;border-radius:6px}
.panel h2{font-size:14px;margin:0 0 6px;font-weight:600}
.panel canvas{display:block;image-rendering:pixelated}
.count{margin-top:6px;font-variant-numeric:tabular-nums;white-space:nowrap}
.done{color:#7fd08a}
</style></head><body>
<div id="bar">
<button id="first" title="start (Home)">|&#x25C0;</button>
<button id="back" title="step back (Left)">&#x25C0;</button>
<button id="play" title="play / pause (Space)">play</button>
<button id="fwd" title="step forward (Right)">&#x25B6;</button>
<button id="last" title="end (End)">&#x25B6;|</button>
<label>speed <select id="speed"></select></label>
<input id="pos" type="range" min="0" value="0" title="step">
<span id="step"></span>
</div>
<div id="panels"></div>
<script id="soko-data" type="application/json">/*DATA*/</script>
<script>
(function(){
"use strict";
const D=JSON.parse(document.getElementById("soko-data").textContent);
const T=D.tile, atlas=new Image();
const BOX=4, BOX_GOAL=5, PLAYER=6, PLAYER_GOAL=7, GOAL=3;
const q=new URLSearchParams(location.search);
const panels=document.getElementById("panels");
const R=D.replays.map(function(r,k){
  const n=r.width*r.height, base=new Uint8Array(n);
  for(let i=0;i<n;i++) base[i]=r.tiles.charCodeAt(i)-48;
  const d={l:-1,r:1,u:-r.width,d:r.width};
  // trace[i]: player square after i steps; push[i]: the box's square before step i+1, or -1
  const trace=new Int32Array(r.lurd.length+1), push=new Int32Array(r.lurd.length);
  const pushes=new Int32Array(r.lurd.length+1);
  trace[0]=r.player;
  for(let i=0;i<r.lurd.length;i++){
    const ch=r.lurd[i], s=d[ch.toLowerCase()], p=trace[i]+s;
    trace[i+1]=p; push[i]=ch===ch.toUpperCase()?p:-1;
    pushes[i+1]=pushes[i]+(push[i]>=0?1:0);
  }
  const boxes=new Uint8Array(n); r.boxes.forEach(function(b){boxes[b]=1;});
  const el=document.createElement("div"); el.className="panel"; el.dataset.replay=k;
  const h=document.createElement("h2"); h.textContent=r.label;
  const cv=document.createElement("canvas");
  cv.width=r.width*T; cv.height=r.height*T;
  cv.style.width=cv.width+"px"; cv.style.height=cv.height+"px";
  const count=document.createElement("div"); count.className="count";
  el.append(h,cv,count); panels.append(el);
  return {r:r,base:base,boxes:boxes,trace:trace,push:push,pushes:pushes,d:d,at:0,
    el:el,ctx:cv.getContext("2d"),count:count,n:r.lurd.length};
});
const N=Math.max.apply(null,R.map(function(x){return x.n;}));
function forward(x){
  const i=x.at, b=x.push[i];
  if(b>=0){ x.boxes[b]=0; x.boxes[b+(b-x.trace[i])]=1; }
  x.at=i+1;
}
function backward(x){
  const i=x.at-1, b=x.push[i];
  if(b>=0){ x.boxes[b+(b-x.trace[i])]=0; x.boxes[b]=1; }
  x.at=i;
}
function draw(x){
  if(!atlas.complete) return;
  const r=x.r, p=x.trace[x.at], ctx=x.ctx;
  for(let y=0;y<r.height;y++) for(let c=0;c<r.width;c++){
    const s=y*r.width+c, g=x.base[s]===GOAL;
    let t=x.base[s];
    if(x.boxes[s]) t=g?BOX_GOAL:BOX; else if(s===p) t=g?PLAYER_GOAL:PLAYER;
    ctx.drawImage(atlas,0,t*T,T,T,c*T,y*T,T,T);
  }
  const end=x.at===x.n;
  x.count.textContent="moves "+x.at+" / "+x.n+" \u00b7 pushes "+x.pushes[x.at]+" / "+r.pushes+
    (end?" \u00b7 solved":"");
  x.count.classList.toggle("done",end);
  x.el.dataset.moves=x.at; x.el.dataset.pushes=x.pushes[x.at];
  x.el.dataset.solved=end?"true":"false";
}
let at=0, timer=null, speed=D.fps;
const pos=document.getElementById("pos"), playBtn=document.getElementById("play");
const stepText=document.getElementById("step"), sel=document.getElementById("speed");
pos.max=N;
[1,2,4,8,16,32,60].forEach(function(v){
  const o=document.createElement("option"); o.value=v; o.textContent=v+" steps/s"; sel.append(o);
});
const mx=document.createElement("option"); mx.value="max"; mx.textContent="max"; sel.append(mx);
function seek(k){
  at=Math.max(0,Math.min(N,k|0));
  R.forEach(function(x){
    const goal=Math.min(at,x.n);
    while(x.at<goal) forward(x);
    while(x.at>goal) backward(x);
    draw(x);
  });
  pos.value=at; stepText.textContent="step "+at+" / "+N;
  const fin=at===N;
  document.body.dataset.step=at; document.body.dataset.finished=fin?"true":"false";
  if(fin) pause();
}
function tick(){ seek(at+1); if(at<N) timer=setTimeout(tick,1000/speed); }
function play(){
  if(at>=N) seek(0);
  if(speed==="max"){ seek(N); return; }
  if(timer===null){ playBtn.textContent="pause"; timer=setTimeout(tick,1000/speed); }
}
function pause(){ if(timer!==null) clearTimeout(timer); timer=null; playBtn.textContent="play"; }
function setSpeed(v){
  speed=v==="max"?"max":Math.max(1,Number(v)||D.fps);
  sel.value=String(speed);
  if(sel.value!==String(speed)){
    const o=document.createElement("option"); o.value=speed; o.textContent=speed+" steps/s";
    sel.append(o); sel.value=String(speed);
  }
  if(timer!==null){ pause(); play(); }
}
playBtn.onclick=function(){ timer===null?play():pause(); };
document.getElementById("back").onclick=function(){ pause(); seek(at-1); };
document.getElementById("fwd").onclick=function(){ pause(); seek(at+1); };
document.getElementById("first").onclick=function(){ pause(); seek(0); };
document.getElementById("last").onclick=function(){ pause(); seek(N); };
pos.oninput=function(){ pause(); seek(Number(pos.value)); };
sel.onchange=function(){ setSpeed(sel.value); };
document.addEventListener("keydown",function(e){
  if(e.target.tagName==="SELECT"||e.target.tagName==="INPUT") return;
  const keys={ArrowLeft:"back",ArrowRight:"fwd",Home:"first",End:"last"," ":"play"};
  if(keys[e.key]){ e.preventDefault(); document.getElementById(keys[e.key]).click(); }
});
window.sokoReplay={play:play,pause:pause,seek:seek,end:function(){pause();seek(N);},
  state:function(){return R.map(function(x){return {label:x.r.label,moves:x.at,
    pushes:x.pushes[x.at],solved:x.at===x.n};});}};
atlas.onload=function(){
  setSpeed(q.get("speed")||D.fps);
  seek(Number(q.get("step"))||0);
  document.body.dataset.ready="true";
  if(q.get("autoplay")==="1") play();
};
atlas.src=D.atlas;
})();
</script>
</body></html>
"""
