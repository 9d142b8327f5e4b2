import { useSignal, type Signal } from '@preact/signals';
import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';
import { afterTrack, type PlayerState } from './player-queue.js';

/** What a page's `<audio>` element takes from `useQueuePlayback`. */
export interface AudioHandlers {
  onPlay: () => void;
  onPause: () => void;
  onEnded: () => void;
}

export interface QueuePlayback {
  /** The browser refused to play without a gesture (a real tablet): one tap on `start` then. */
  needsTap: Signal<boolean>;
  /** Plays now: called from a tap, which the browser counts as the gesture it wants. */
  start: () => void;
  handlers: AudioHandlers;
}

/**
 * An `<audio>` element playing a card's queue (player-queue.ts) as `state` says, for both players
 * (the card page and the browser player): the state leads, and the element follows its track,
 * volume and playing; at a track's end the state moves on (`afterTrack`), and the element plays
 * the next track. The element's own play and pause (media keys, the system's controls) go back
 * into the state, except the `pause` a track's end fires just before `ended`: taken as a person's
 * pause, it stopped the card after every track. `onChange` runs after each change the element
 * follows (the browser player reports its status then).
 */
export function useQueuePlayback(audio: RefObject<HTMLAudioElement | null>, state: Signal<PlayerState>, url: string | undefined, queueLength: number, onChange?: () => void): QueuePlayback {
  const needsTap = useSignal(false);
  const { playing, stopped, volume } = state.value;
  useEffect(() => {
    const el = audio.current;
    if (!el) return;
    el.volume = volume / 100;
    if (playing && !stopped) {
      el.play().then(
        () => (needsTap.value = false),
        (err: Error) => (needsTap.value = err.name === 'NotAllowedError'),
      );
    } else el.pause();
    onChange?.();
  }, [url, playing, stopped, volume]);

  return {
    needsTap,
    start: () => void audio.current?.play().then(() => (needsTap.value = false)),
    handlers: {
      onPlay: () => {
        if (!state.value.playing || state.value.stopped) state.value = { ...state.value, playing: true, stopped: false };
      },
      onPause: () => {
        if (audio.current?.ended || !state.value.playing) return;
        state.value = { ...state.value, playing: false };
      },
      onEnded: () => (state.value = afterTrack(state.value, queueLength)),
    },
  };
}
