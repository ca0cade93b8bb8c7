export { createUploadFromContent, createUploadFromPaths, getUploadJob, listUploadJobs, waitForUpload } from './jobs.js';
export type { UploadJob } from './jobs.js';
export { cancelUpload, resumeUpload } from './control.js';
export { processUploadFile, startUploadWorkers } from './worker.js';
export type { UploadWorkers } from './worker.js';
