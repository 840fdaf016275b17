"""The ``render_mode="human"`` window: shows RGB frames with pygame, imported lazily."""

from __future__ import annotations

from typing import Any

import numpy as np

_PYGAME_MISSING = 'pygame is needed for render_mode="human": pip install "soko-gym[render]"'


def _import_pygame() -> Any:
    try:
        import pygame
    except ImportError as error:
        raise ImportError(_PYGAME_MISSING) from error
    return pygame


class HumanRenderer:
    """A pygame window that shows one RGB frame per call, opened lazily on the first frame.

    Closing the window (the window manager's close button) is not an error: the window goes
    away, later frames are skipped and :meth:`show` returns False until :meth:`close` is
    called, after which the next frame opens a new window. pygame has one display per
    process, so only one renderer should be showing frames at a time.

    Args:
        caption: the window title.
    """

    def __init__(self, caption: str = "soko-gym") -> None:
        self.caption = caption
        self._pygame: Any = None
        self._window: Any = None
        self._clock: Any = None
        self._closed_by_user = False

    @property
    def is_open(self) -> bool:
        """Whether a window is currently shown."""
        return self._window is not None

    def show(self, frame: np.ndarray, fps: int) -> bool:
        """Show one frame, then wait so that frames come at most ``fps`` per second.

        Args:
            frame: uint8[h, w, 3] RGB picture.
            fps: frames per second to pace to; 0 or less does not wait.

        Returns:
            True when the frame was shown, False when the user has closed the window.

        Raises:
            ImportError: when pygame is not installed.
            ValueError: when ``frame`` is not a uint8[h, w, 3] array.
        """
        if not (isinstance(frame, np.ndarray) and frame.dtype == np.uint8):
            raise ValueError("frame must be a uint8 numpy array")
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.shape[0] < 1 or frame.shape[1] < 1:
            raise ValueError(f"frame must have shape [h, w, 3], got {frame.shape}")
        if self._closed_by_user:
            return False
        pygame = self._pygame or _import_pygame()
        self._pygame = pygame
        height, width = frame.shape[:2]
        if self._window is None or self._window.get_size() != (width, height):
            self._open(width, height)
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
        self._window.blit(surface, (0, 0))
        pygame.display.flip()
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                self._quit_display()
                self._closed_by_user = True
                return False
        if fps > 0:
            self._clock.tick(fps)
        return True

    def close(self) -> None:
        """Close the window if it is open; a later :meth:`show` opens a new one."""
        self._quit_display()
        self._closed_by_user = False

    def _open(self, width: int, height: int) -> None:
        pygame = self._pygame
        pygame.display.init()
        pygame.display.set_caption(self.caption)
        self._window = pygame.display.set_mode((width, height))
        if self._clock is None:
            self._clock = pygame.time.Clock()

    def _quit_display(self) -> None:
        if self._window is not None:
            self._pygame.display.quit()
            self._window = None
