pic = cv2.resize(pic, (HEIGHT,WIDTH))
