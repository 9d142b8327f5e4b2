import { signal, type Signal } from '@preact/signals';
import pLimit from 'p-limit';
import { api, errorMessage } from './api.js';
import { messages } from './messages.js';

/** At most this many files upload (and are hashed) at once. */
const AT_ONCE = 3;
const POLL_MS = 500;

export type Phase = 'waiting' | 'hashing' | 'uploading' | 'transcoding' | 'done' | 'failed';

export interface Transcoded {
  sha256: string;
  duration: number;
  fileSize: number;
}

/** One file's way to a transcode: a row of the editor's upload list. */
export interface Upload {
  id: number;
  file: File;
  phase: Signal<Phase>;
  /** 0..100 within the phase: bytes sent, then the transcode's own percent. */
  percent: Signal<number>;
  error: Signal<string | undefined>;
  result: Signal<Transcoded | undefined>;
}

const limit = pLimit(AT_ONCE);
let nextId = 1;

export function newUpload(file: File): Upload {
  return { id: nextId++, file, phase: signal('waiting'), percent: signal(0), error: signal(undefined), result: signal(undefined) };
}

const hex = (buffer: ArrayBuffer): string => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** The row's message for a refused upload: a 413 (quota, size) or a 400 (not audio) said plainly. */
function refusal(status: number, message: string): string {
  if (status === 413) return messages.editor.tooLarge(message);
  if (status === 400) return messages.editor.notAudio(message);
  return message;
}

/** PUT with upload progress (fetch reports none): XMLHttpRequest. */
function put(url: string, file: File, onProgress: (percent: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress((e.loaded / e.total) * 100);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let message = `HTTP ${xhr.status}`;
      try {
        message = (JSON.parse(xhr.responseText) as { error: { message: string } }).error.message;
      } catch {
        // not the documented shape: the status says enough
      }
      reject(new Error(refusal(xhr.status, message)));
    };
    xhr.onerror = () => reject(new Error(messages.common.noConnection));
    xhr.send(file);
  });
}

async function run(upload: Upload): Promise<Transcoded> {
  upload.phase.value = 'hashing';
  // The hash first: audio this person uploaded before is not sent again (`uploadUrl` null).
  const sha256 = hex(await crypto.subtle.digest('SHA-256', await upload.file.arrayBuffer()));
  const asked = await api.GET('/media/transcode/audio/uploadUrl', { params: { query: { sha256, filename: upload.file.name } } });
  if (!asked.data) throw new Error(errorMessage(asked.error, asked.response));
  const { uploadId, uploadUrl } = asked.data.upload;
  upload.phase.value = 'uploading';
  if (uploadUrl) await put(uploadUrl, upload.file, (p) => (upload.percent.value = p));
  upload.percent.value = 100;
  upload.phase.value = 'transcoding';
  upload.percent.value = 0;
  for (;;) {
    const polled = await api.GET('/media/upload/{uploadId}/transcoded', { params: { path: { uploadId } } });
    if (!polled.data) throw new Error(refusal(polled.response.status, errorMessage(polled.error, polled.response)));
    const transcode = polled.data.transcode;
    if ('transcodedSha256' in transcode) {
      upload.percent.value = 100;
      return { sha256: transcode.transcodedSha256, duration: Math.round(transcode.transcodedInfo.duration), fileSize: transcode.transcodedInfo.fileSize };
    }
    upload.percent.value = transcode.progress.percent;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Queues the upload (three at a time); resolves with the transcode, or undefined when it failed (the row says why). */
export function start(upload: Upload): Promise<Transcoded | undefined> {
  upload.error.value = undefined;
  upload.phase.value = 'waiting';
  upload.percent.value = 0;
  return limit(() => run(upload)).then(
    (result) => {
      upload.phase.value = 'done';
      upload.result.value = result;
      return result;
    },
    (err: unknown) => {
      upload.phase.value = 'failed';
      upload.error.value = err instanceof Error ? err.message : String(err);
      return undefined;
    },
  );
}
