package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// redPixelPNG returns a 1x1 red PNG, the image the suite suggests.
func redPixelPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 0xff, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding to memory cannot fail
	}
	return buf.Bytes()
}

// WAV parameters of silentWAV: 10 ms of 8 kHz, 8-bit mono silence.
const (
	wavRate    = 8000
	wavSamples = 80
)

// silentWAV returns a short, valid RIFF/WAVE file of silence.
func silentWAV() []byte {
	var buf bytes.Buffer
	w := func(v any) { binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString("RIFF")
	w(uint32(36 + wavSamples))
	buf.WriteString("WAVEfmt ")
	w(uint32(16))      // fmt chunk size
	w(uint16(1))       // PCM
	w(uint16(1))       // mono
	w(uint32(wavRate)) // sample rate
	w(uint32(wavRate)) // byte rate: rate * channels * 1 byte
	w(uint16(1))       // block align
	w(uint16(8))       // bits per sample
	buf.WriteString("data")
	w(uint32(wavSamples))
	buf.Write(bytes.Repeat([]byte{0x80}, wavSamples)) // 8-bit PCM silence is 128
	return buf.Bytes()
}
